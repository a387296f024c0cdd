package noderesources_test

import (
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/noderesources"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestFitFilter(t *testing.T) {
	node := func() *api.Node { return schedtest.Node("n", "2", "4Gi", 3) }
	gpuNode := node()
	gpuNode.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("1")
	gpuPod := schedtest.Pod("ns", "g", "", "")
	gpuPod.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("2")
	cases := []struct {
		name     string
		node     *api.Node
		existing []*api.Pod
		pod      *api.Pod
		want     []string
	}{
		{"fits", node(), nil, schedtest.Pod("ns", "p", "1", "1Gi"), nil},
		{"exactly fills", node(), []*api.Pod{schedtest.Pod("ns", "a", "1", "2Gi")}, schedtest.Pod("ns", "p", "1", "2Gi"), nil},
		{"cpu", node(), []*api.Pod{schedtest.Pod("ns", "a", "1500m", "")}, schedtest.Pod("ns", "p", "600m", ""), []string{"Insufficient cpu"}},
		{"memory", node(), nil, schedtest.Pod("ns", "p", "", "5Gi"), []string{"Insufficient memory"}},
		{"cpu and memory", node(), nil, schedtest.Pod("ns", "p", "3", "5Gi"), []string{"Insufficient cpu", "Insufficient memory"}},
		{"too many pods", node(), []*api.Pod{schedtest.Pod("ns", "a", "", ""), schedtest.Pod("ns", "b", "", ""), schedtest.Pod("ns", "c", "", "")}, schedtest.Pod("ns", "p", "", ""), []string{"Too many pods"}},
		{"best effort fits anywhere with a slot", node(), []*api.Pod{schedtest.Pod("ns", "a", "2", "4Gi")}, schedtest.Pod("ns", "p", "", ""), nil},
		{"extended resource", gpuNode, nil, gpuPod, []string{"Insufficient nvidia.com/gpu"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := schedtest.Filter(noderesources.Fit{}, tc.pod, schedtest.NodeInfo(tc.node, tc.existing...))
			var got []string
			if s != nil {
				got = s.Reasons
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reasons = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInitContainersAndOverhead(t *testing.T) {
	p := schedtest.Pod("ns", "p", "500m", "")
	p.Spec.InitContainers = []api.Container{{Name: "init", Resources: api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("1500m")}}}}
	p.Spec.Overhead = api.ResourceList{api.ResourceCPU: resource.MustParse("100m")}
	// max(1500m init, 500m regular) + 100m overhead = 1600m > 1500m free.
	n := schedtest.NodeInfo(schedtest.Node("n", "2", "4Gi", 10), schedtest.Pod("ns", "a", "500m", ""))
	if s := schedtest.Filter(noderesources.Fit{}, p, n); s.Message() != "Insufficient cpu" {
		t.Errorf("got %q, want Insufficient cpu", s.Message())
	}
	always := api.ContainerRestartPolicyAlways
	q := schedtest.Pod("ns", "q", "500m", "")
	q.Spec.InitContainers = []api.Container{{Name: "sidecar", RestartPolicy: &always, Resources: api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("1")}}}}
	// A sidecar runs beside the containers: 1 + 0.5 = 1.5 fits exactly.
	if s := schedtest.Filter(noderesources.Fit{}, q, n); s != nil {
		t.Errorf("sidecar pod: %q", s.Message())
	}
}

func TestScores(t *testing.T) {
	// empty: 4 cpu / 8Gi free; half: 2 cpu and 2Gi requested.
	empty := schedtest.NodeInfo(schedtest.Node("empty", "4", "8Gi", 110))
	half := schedtest.NodeInfo(schedtest.Node("half", "4", "8Gi", 110), schedtest.Pod("ns", "a", "2", "2Gi"))
	p := schedtest.Pod("ns", "p", "1", "2Gi")
	least := schedtest.Score(noderesources.Fit{}, p, empty, half)
	// empty: cpu (4-1)/4=75, mem (8-2)/8=75 -> 75; half: cpu 25, mem 50 -> 37.
	if least["empty"] != 75 || least["half"] != 37 {
		t.Errorf("least allocated = %v, want empty 75, half 37", least)
	}
	bal := schedtest.Score(noderesources.BalancedAllocation{}, p, empty, half)
	// empty: cpu .25 mem .25 -> 100; half: cpu .75, mem .5 -> 1-.125 -> 87.
	if bal["empty"] != 100 || bal["half"] != 87 {
		t.Errorf("balanced = %v, want empty 100, half 87", bal)
	}
	// A best-effort pod is scored with kube's defaults (100m, 200Mi).
	be := schedtest.Score(noderesources.Fit{}, schedtest.Pod("ns", "be", "", ""), empty)
	if be["empty"] != (97+97)/2 {
		t.Errorf("best effort least allocated = %v, want 97", be)
	}
}

// TestFitsAmounts: the kubelet's admission message needs what the pod
// requests, what the node's pods use and the node's allocatable.
func TestFitsAmounts(t *testing.T) {
	node := schedtest.Node("n", "1", "4Gi", 2)
	node.Status.Allocatable["example.com/foo"] = resource.MustParse("3")
	used := schedtest.Pod("ns", "a", "100m", "")
	used.Spec.Containers[0].Resources.Requests["example.com/foo"] = resource.MustParse("2")
	pod := schedtest.Pod("ns", "p", "1", "")
	pod.Spec.Containers[0].Resources.Requests["example.com/foo"] = resource.MustParse("2")
	req, _ := framework.PodRequests(pod)
	got := noderesources.Fits(req, schedtest.NodeInfo(node, used, schedtest.Pod("ns", "b", "", "")))
	want := []noderesources.InsufficientResource{
		{ResourceName: api.ResourcePods, Reason: "Too many pods", Requested: 1, Used: 2, Capacity: 2},
		{ResourceName: api.ResourceCPU, Reason: "Insufficient cpu", Requested: 1000, Used: 100, Capacity: 1000},
		{ResourceName: "example.com/foo", Reason: "Insufficient example.com/foo", Requested: 2, Used: 2, Capacity: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Fits = %+v\nwant %+v", got, want)
	}
}
