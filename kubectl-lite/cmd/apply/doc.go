// Package apply implements the verbs that write manifests: "apply -f"
// (create, or a three-way strategic merge patch from the
// last-applied-configuration annotation), "create -f" and "replace -f",
// each with --dry-run=client|server (a server dry run sends ?dryRun=All, so
// the server validates without persisting) and -o. It also holds the
// generators that build an object from flags and create it the same way:
// "create namespace|configmap|secret generic|deployment|service", "run"
// and "expose".
package apply
