package scheduling

import (
	"errors"
	"fmt"
	"sort"
	"strings"

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
	// UnschedulablePlugins names the plugins that rejected the pod.
	UnschedulablePlugins map[string]bool
}

// FitError says no node fits the pod.
type FitError struct {
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error renders kube-scheduler's message, "0/3 nodes are available: 1
// Insufficient cpu, 2 node(s) had untolerated taint {k: v}." The reasons
// are counted over nodes and the "count reason" strings sorted as strings,
// exactly as kube's FitError does.
func (f *FitError) Error() string {
	msg := fmt.Sprintf("0/%v nodes are available:", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		return msg + " " + f.Diagnosis.PreFilterMsg + "."
	}
	counts := map[string]int{}
	for _, s := range f.Diagnosis.NodeToStatus {
		for _, r := range s.Reasons {
			counts[r]++
		}
	}
	reasons := make([]string, 0, len(counts))
	for r, n := range counts {
		reasons = append(reasons, fmt.Sprintf("%v %v", n, r))
	}
	sort.Strings(reasons)
	if len(reasons) > 0 {
		msg += " " + strings.Join(reasons, ", ") + "."
	}
	return msg
}
