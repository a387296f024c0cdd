// Package edit implements "kubectl-lite edit": the object is opened as YAML
// (or JSON) in $KUBE_EDITOR or $EDITOR, and the changes saved are sent as a
// strategic merge patch.
package edit
