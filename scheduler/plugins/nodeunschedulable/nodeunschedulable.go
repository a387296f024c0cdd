package nodeunschedulable

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/podplacement"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeUnschedulable"

// ErrReasonUnschedulable is kube's failure reason.
const ErrReasonUnschedulable = "node(s) were unschedulable"

// Plugin is the NodeUnschedulable filter.
type Plugin struct{}

var _ framework.FilterPlugin = Plugin{}

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

var unschedulableTaint = api.Taint{Key: api.TaintNodeUnschedulable, Effect: api.TaintEffectNoSchedule}

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	if n.Unschedulable && !podplacement.TolerationsTolerateTaint(pod.Spec.Tolerations, &unschedulableTaint) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
	}
	return nil
}
