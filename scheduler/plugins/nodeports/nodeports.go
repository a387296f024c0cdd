package nodeports

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name.
const Name = "NodePorts"

// ErrReason is kube's failure reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const stateKey framework.StateKey = "PreFilter" + Name

// Plugin is the NodePorts filter.
type Plugin struct{}

var (
	_ framework.PreFilterPlugin = Plugin{}
	_ framework.FilterPlugin    = Plugin{}
)

// Name implements framework.Plugin.
func (Plugin) Name() string { return Name }

// PreFilter implements framework.PreFilterPlugin: it collects the pod's
// host ports once and skips the filter for pods without any.
func (Plugin) PreFilter(_ context.Context, state *framework.CycleState, pod *api.Pod) *framework.Status {
	ports := framework.HostPorts(pod)
	if len(ports) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, ports)
	return nil
}

// Filter implements framework.FilterPlugin.
func (Plugin) Filter(_ context.Context, state *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	var ports []api.ContainerPort
	if v, ok := state.Read(stateKey); ok {
		ports = v.([]api.ContainerPort)
	} else {
		ports = framework.HostPorts(pod)
	}
	for _, p := range ports {
		if n.UsedPorts.CheckConflict(p.HostIP, p.Protocol, p.HostPort) {
			return framework.NewStatus(framework.Unschedulable, ErrReason)
		}
	}
	return nil
}
