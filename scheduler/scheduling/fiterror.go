package scheduling

import (
	"errors"

	"github.com/minik8s/minik8s/scheduler/framework"
)

// ErrNoNodesAvailable is the failure when the cluster has no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Diagnosis records why nodes were rejected.
type Diagnosis struct {
	// NodeToStatus holds the failed filter's status per rejected node.
	NodeToStatus map[string]*framework.Status
	// PreFilterMsg is set when a PreFilter rejected the pod on all nodes.
	PreFilterMsg string
	// PostFilterMsg is the PostFilter plugins' (preemption's) message.
	PostFilterMsg string
	// UnschedulablePlugins names the plugins that rejected the pod.
	UnschedulablePlugins map[string]bool
}

// FitError says no node fits the pod.
type FitError struct {
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error renders kube-scheduler's message, "0/3 nodes are available: 1
// Insufficient cpu, 2 node(s) had untolerated taint {k: v}.", followed by
// the PostFilter's (preemption's) message.
func (f *FitError) Error() string {
	return framework.FitErrorMessage(f.NumAllNodes, f.Diagnosis.NodeToStatus, nil, f.Diagnosis.PreFilterMsg, f.Diagnosis.PostFilterMsg)
}
