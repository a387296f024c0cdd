package api

// The conditions the kubelet sets on a pod whose containers' resources
// were changed in place (pods/resize), and their reasons, as kube v1.37's.
const (
	// PodResizePending: the kubelet has not allocated the new resources
	// yet (reason Deferred: the node may fit them later; Infeasible: it
	// never will).
	PodResizePending PodConditionType = "PodResizePending"
	// PodResizeInProgress: the kubelet allocated the new resources and is
	// applying them to the containers (reason Error when that failed).
	PodResizeInProgress PodConditionType = "PodResizeInProgress"

	PodReasonDeferred   = "Deferred"
	PodReasonInfeasible = "Infeasible"
	PodReasonError      = "Error"
)
