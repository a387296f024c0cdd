// Package apply implements "apply -f": its flags (--server-side,
// --force-conflicts, --field-manager, and write's --dry-run, -o, -R...)
// and, for each manifest object, a client-side apply (created, configured
// or unchanged through a three-way strategic merge) or a server-side apply
// under the "kubectl" field manager, both computed by package applyobject.
package apply
