package plugins_test

import (
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins"
	"github.com/minik8s/minik8s/scheduler/plugins/nodevolumelimits"
	"github.com/minik8s/minik8s/scheduler/plugins/volumebinding"
	"github.com/minik8s/minik8s/scheduler/plugins/volumerestrictions"
	"github.com/minik8s/minik8s/scheduler/plugins/volumezone"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

// TestDefaultProfile pins the default plugins' order and weights.
func TestDefaultProfile(t *testing.T) {
	var got []string
	weights := map[string]int64{}
	for _, wp := range plugins.Default(schedtest.Handle{}, &volumerestrictions.Plugin{}, &nodevolumelimits.Plugin{}, &volumebinding.Plugin{}, &volumezone.Plugin{}) {
		got = append(got, wp.Plugin.Name())
		if wp.Weight > 0 {
			weights[wp.Plugin.Name()] = wp.Weight
		}
	}
	want := []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeReady", "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "InterPodAffinity", "NodeResourcesBalancedAllocation", "SelectorSpread"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	wantW := map[string]int64{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "SelectorSpread": 2}
	if !reflect.DeepEqual(weights, wantW) {
		t.Errorf("weights = %v, want %v", weights, wantW)
	}
	fwk := framework.New(plugins.Default(schedtest.Handle{}), 1)
	if !fwk.HasScorePlugins() {
		t.Error("default framework has no score plugins")
	}
}

// TestNotReadyTaintMessageWins checks the filter order: a NotReady node with
// the not-ready taint reports the taint, as kube would.
func TestNotReadyTaintMessageWins(t *testing.T) {
	n := schedtest.WithTaints(schedtest.NotReady(schedtest.Node("n", "1", "1Gi", 10)), api.Taint{Key: api.TaintNodeNotReady, Effect: api.TaintEffectNoSchedule})
	fwk := framework.New(plugins.Default(schedtest.Handle{Lister: schedtest.Lister{schedtest.NodeInfo(n)}}), 1)
	pod := schedtest.Pod("ns", "p", "", "")
	state := framework.NewCycleState()
	if s := fwk.RunPreFilterPlugins(t.Context(), state, pod); !s.IsSuccess() {
		t.Fatal(s.Message())
	}
	s := fwk.RunFilterPlugins(t.Context(), state, pod, schedtest.NodeInfo(n))
	if s.Message() != "node(s) had untolerated taint {node.kubernetes.io/not-ready: }" || s.Plugin != "TaintToleration" {
		t.Errorf("status = %q from %s", s.Message(), s.Plugin)
	}
}
