// Package attach implements "kubectl-lite attach": the pod is chosen by
// package podselect, refused when it has completed, and attached to by
// package attachsession.
package attach
