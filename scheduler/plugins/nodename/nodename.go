package nodename

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodeName"

// ErrReason is kube's failure reason.
const ErrReason = "node(s) didn't match the requested node name"

// Plugin is the NodeName filter.
type Plugin struct{}

var (
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
)

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// PreFilter implements framework.PreFilterPlugin: pods without
// spec.nodeName skip the filter.
func (Plugin) PreFilter(_ context.Context, _ *framework.CycleState, pod *api.Pod) *framework.Status {
	if pod.Spec.NodeName == "" {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, _ *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != n.Name {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}
