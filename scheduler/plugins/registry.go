package plugins

import (
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/interpodaffinity"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeaffinity"
	"github.com/minik8s/minik8s/scheduler/plugins/nodename"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeports"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeready"
	"github.com/minik8s/minik8s/scheduler/plugins/noderesources"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeunschedulable"
	"github.com/minik8s/minik8s/scheduler/plugins/selectorspread"
	"github.com/minik8s/minik8s/scheduler/plugins/tainttoleration"
)

// Default returns the default profile's plugins in kube-scheduler's filter
// order (cheap, unresolvable checks first) with its default score weights:
// NodeResourcesFit 1, BalancedAllocation 1, NodeAffinity 2,
// TaintToleration 3, spreading 2 (PodTopologySpread's weight),
// InterPodAffinity 2. The volume plugins (VolumeRestrictions,
// NodeVolumeLimits, VolumeBinding, VolumeZone), built by the scheduler over
// its informers, filter after NodeResourcesFit, in the order given, as in
// kube's default_plugins.go.
func Default(h framework.Handle, volumes ...framework.Plugin) []framework.WeightedPlugin {
	out := []framework.WeightedPlugin{
		{Plugin: nodeunschedulable.Plugin{}},
		{Plugin: nodename.Plugin{}},
		{Plugin: tainttoleration.Plugin{}, Weight: 3},
		{Plugin: nodeready.Plugin{}},
		{Plugin: nodeaffinity.Plugin{}, Weight: 2},
		{Plugin: nodeports.Plugin{}},
		{Plugin: noderesources.Fit{}, Weight: 1},
	}
	for _, p := range volumes {
		out = append(out, framework.WeightedPlugin{Plugin: p})
	}
	return append(out, []framework.WeightedPlugin{
		{Plugin: interpodaffinity.New(h), Weight: 2},
		{Plugin: noderesources.BalancedAllocation{}, Weight: 1},
		{Plugin: selectorspread.New(h), Weight: 2},
	}...)
}
