package scheduling

import (
	"testing"

	"github.com/minik8s/minik8s/scheduler/framework"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	cases := []struct {
		pct   int32
		nodes int
		want  int
	}{
		{0, 10, 10},
		{0, 99, 99},
		{0, 100, 100},   // 50-0=50% of 100 = 50, raised to the 100 floor
		{0, 1000, 420},  // 50 - 8 = 42%
		{0, 5000, 500},  // 50 - 40 = 10%
		{0, 6000, 300},  // 50 - 48 = 2% -> 5%
		{0, 15000, 750}, // 5%
		{30, 1000, 300},
		{100, 5000, 5000},
		{1, 1000, 100},
	}
	for _, tc := range cases {
		if got := NumFeasibleNodesToFind(tc.pct, tc.nodes); got != tc.want {
			t.Errorf("NumFeasibleNodesToFind(%d, %d) = %d, want %d", tc.pct, tc.nodes, got, tc.want)
		}
	}
}

func TestSelectHostBreaksTiesRandomly(t *testing.T) {
	scores := []framework.NodeScore{{Name: "a", Score: 10}, {Name: "b", Score: 30}, {Name: "c", Score: 30}, {Name: "d", Score: 5}}
	seen := map[string]int{}
	for range 2000 {
		seen[selectHost(scores)]++
	}
	if seen["a"]+seen["d"] != 0 {
		t.Errorf("picked a lower score: %v", seen)
	}
	// Each of the two best should win about half the time.
	if seen["b"] < 800 || seen["c"] < 800 {
		t.Errorf("ties not broken uniformly: %v", seen)
	}
}

func TestFitErrorMessage(t *testing.T) {
	st := func(r ...string) *framework.Status { return framework.NewStatus(framework.Unschedulable, r...) }
	taint := "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
	cases := []struct {
		name string
		fe   FitError
		want string
	}{
		{"kube's example", FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: map[string]*framework.Status{
			"w": st("Insufficient cpu"), "cp1": st(taint), "cp2": st(taint)}}},
			"0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }."},
		{"several reasons on one node count separately, sorted as strings", FitError{NumAllNodes: 12, Diagnosis: Diagnosis{NodeToStatus: func() map[string]*framework.Status {
			m := map[string]*framework.Status{"x": st("Insufficient cpu", "Insufficient memory"), "y": st("Too many pods")}
			for i := range 10 {
				m[string(rune('a'+i))] = st("node(s) didn't match Pod's node affinity/selector")
			}
			return m
		}()}},
			"0/12 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods, 10 node(s) didn't match Pod's node affinity/selector."},
		{"prefilter", FitError{NumAllNodes: 2, Diagnosis: Diagnosis{PreFilterMsg: "bad selector"}}, "0/2 nodes are available: bad selector."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.fe.Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
