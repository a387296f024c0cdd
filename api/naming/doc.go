// Package naming holds the low-level string validators of the Kubernetes API:
// DNS labels and subdomains, qualified names (label keys), label values, port
// names and numbers, IPs and CIDRs, environment variable names, ConfigMap
// keys, HTTP header names, and the object-name validators used for
// metadata.name and path segments. Every IsX function returns the list of
// problems found, worded exactly as Kubernetes words them; an empty list
// means the value is valid. The functions are pure and safe for concurrent use.
package naming
