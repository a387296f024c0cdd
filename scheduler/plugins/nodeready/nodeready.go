package nodeready

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/podplacement"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeReady"

// ErrReasonNotReady is the failure reason (kube's former CheckNodeCondition
// predicate wording).
const ErrReasonNotReady = "node(s) were not ready"

// Plugin is the NodeReady filter.
type Plugin struct{}

var _ framework.FilterPlugin = Plugin{}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

var notReadyTaint = api.Taint{Key: api.TaintNodeNotReady, Effect: api.TaintEffectNoSchedule}

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	if n.Ready || podplacement.TolerationsTolerateTaint(pod.Spec.Tolerations, &notReadyTaint) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotReady)
}

// IsReady reports whether node has condition Ready=True.
func IsReady(node *api.Node) bool {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == api.NodeReady {
			return node.Status.Conditions[i].Status == api.ConditionTrue
		}
	}
	return false
}
