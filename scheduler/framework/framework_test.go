package framework_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestDefaultNormalizeScore(t *testing.T) {
	cases := []struct {
		name    string
		in      []int64
		reverse bool
		want    []int64
	}{
		{"scales to max", []int64{1, 2, 4}, false, []int64{25, 50, 100}},
		{"reverse", []int64{1, 2, 4}, true, []int64{75, 50, 0}},
		{"all zero", []int64{0, 0}, false, []int64{0, 0}},
		{"all zero reverse", []int64{0, 0}, true, []int64{100, 100}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := make([]framework.NodeScore, len(tc.in))
			for i, v := range tc.in {
				s[i].Score = v
			}
			framework.DefaultNormalizeScore(100, tc.reverse, s)
			for i := range s {
				if s[i].Score != tc.want[i] {
					t.Errorf("got %v, want %v", s, tc.want)
					break
				}
			}
		})
	}
}

func TestHostPortInfo(t *testing.T) {
	h := framework.HostPortInfo{}
	h.Add("", "", 80)
	h.Add("10.0.0.1", "UDP", 53)
	cases := []struct {
		ip    string
		proto api.Protocol
		port  int32
		want  bool
	}{
		{"", "TCP", 80, true},
		{"10.0.0.9", "TCP", 80, true},
		{"", "UDP", 80, false},
		{"10.0.0.1", "UDP", 53, true},
		{"10.0.0.2", "UDP", 53, false},
		{"0.0.0.0", "UDP", 53, true},
	}
	for _, tc := range cases {
		if got := h.CheckConflict(tc.ip, tc.proto, tc.port); got != tc.want {
			t.Errorf("CheckConflict(%q, %s, %d) = %v, want %v", tc.ip, tc.proto, tc.port, got, tc.want)
		}
	}
	h.Remove("", "TCP", 80)
	if h.CheckConflict("", "TCP", 80) {
		t.Error("port 80 still in use after Remove")
	}
}

func TestNodeInfoAddRemove(t *testing.T) {
	a := schedtest.WithHostPort(schedtest.Pod("ns", "a", "500m", "1Gi"), 8080)
	b := schedtest.Pod("ns", "b", "", "")
	ni := schedtest.NodeInfo(schedtest.Node("n", "4", "8Gi", 110), a, b)
	if ni.Requested.MilliCPU != 500 || ni.Requested.Memory != 1<<30 {
		t.Errorf("requested = %+v", ni.Requested)
	}
	if ni.NonZeroRequested.MilliCPU != 500+framework.DefaultMilliCPURequest || ni.NonZeroRequested.Memory != 1<<30+framework.DefaultMemoryRequest {
		t.Errorf("non-zero requested = %+v", ni.NonZeroRequested)
	}
	if !ni.UsedPorts.CheckConflict("", "TCP", 8080) {
		t.Error("host port not recorded")
	}
	gen := ni.Generation
	clone := ni.Clone()
	if err := ni.RemovePod(a); err != nil {
		t.Fatal(err)
	}
	if ni.Generation <= gen || ni.Requested.MilliCPU != 0 || ni.UsedPorts.CheckConflict("", "TCP", 8080) || len(ni.Pods) != 1 {
		t.Errorf("after remove: gen %d (was %d) requested %+v pods %d", ni.Generation, gen, ni.Requested, len(ni.Pods))
	}
	if clone.Requested.MilliCPU != 500 || !clone.UsedPorts.CheckConflict("", "TCP", 8080) || len(clone.Pods) != 2 {
		t.Error("the clone changed with the original")
	}
	if err := ni.RemovePod(a); err == nil {
		t.Error("removing an absent pod succeeded")
	}
}

func TestParallelizerVisitsEveryPiece(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 1000} {
		var seen = make([]atomic.Int32, n)
		framework.Parallelizer{Workers: 16}.Until(context.Background(), n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("n=%d: piece %d visited %d times", n, i, seen[i].Load())
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	framework.Parallelizer{Workers: 4}.Until(ctx, 100000, func(i int) {
		if calls.Add(1) == 10 {
			cancel()
		}
	})
	if calls.Load() >= 100000 {
		t.Error("cancel did not stop the work early")
	}
}

type fakeFilter struct {
	name string
	fail map[string]string
}

func (f fakeFilter) Name() string { return f.name }
func (f fakeFilter) Filter(_ context.Context, _ *framework.CycleState, _ *api.Pod, n *framework.NodeInfo) *framework.Status {
	if r, ok := f.fail[n.Node().Name]; ok {
		return framework.NewStatus(framework.Unschedulable, r)
	}
	return nil
}

type fakeScore struct {
	name   string
	scores map[string]int64
}

func (f fakeScore) Name() string { return f.name }
func (f fakeScore) Score(_ context.Context, _ *framework.CycleState, _ *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	return f.scores[n.Node().Name], nil
}

func TestFrameworkFiltersInOrderAndWeighsScores(t *testing.T) {
	fwk := framework.New([]framework.WeightedPlugin{
		{Plugin: fakeFilter{"first", map[string]string{"a": "first says no"}}},
		{Plugin: fakeFilter{"second", map[string]string{"a": "second says no", "b": "second says no"}}},
		{Plugin: fakeScore{"s1", map[string]int64{"a": 10, "b": 20}}, Weight: 2},
		{Plugin: fakeScore{"s2", map[string]int64{"a": 50, "b": 0}}, Weight: 1},
		{Plugin: fakeScore{"off", map[string]int64{"a": 100}}, Weight: 0},
	}, 4)
	a := schedtest.NodeInfo(schedtest.Node("a", "1", "1Gi", 1))
	b := schedtest.NodeInfo(schedtest.Node("b", "1", "1Gi", 1))
	state := framework.NewCycleState()
	pod := schedtest.Pod("ns", "p", "", "")
	if s := fwk.RunFilterPlugins(t.Context(), state, pod, a); s.Plugin != "first" || s.Message() != "first says no" {
		t.Errorf("node a: %s %q", s.Plugin, s.Message())
	}
	if s := fwk.RunFilterPlugins(t.Context(), state, pod, b); s.Plugin != "second" {
		t.Errorf("node b: %+v", s)
	}
	scores, st := fwk.RunScorePlugins(t.Context(), state, pod, []*framework.NodeInfo{a, b})
	if !st.IsSuccess() {
		t.Fatal(st.Message())
	}
	if scores[0].Score != 10*2+50 || scores[1].Score != 20*2 {
		t.Errorf("scores = %v", scores)
	}
	bad := framework.New([]framework.WeightedPlugin{{Plugin: fakeScore{"big", map[string]int64{"a": 101}}, Weight: 1}}, 1)
	if _, st := bad.RunScorePlugins(t.Context(), state, pod, []*framework.NodeInfo{a}); st.IsSuccess() {
		t.Error("a score above 100 was accepted")
	}
}

// recordingPlugin records its Reserve, Unreserve and PreBind calls into a
// shared log and answers with the statuses it was given.
type recordingPlugin struct {
	name             string
	log              *[]string
	reserve, preBind *framework.Status
	skipPreBind      bool
}

func (p *recordingPlugin) PreBindPreFlight(context.Context, *framework.CycleState, *api.Pod, string) *framework.Status {
	if p.skipPreBind {
		return framework.NewStatus(framework.Skip)
	}
	return nil
}

func (p *recordingPlugin) Name() string { return p.name }

func (p *recordingPlugin) Reserve(_ context.Context, _ *framework.CycleState, _ *api.Pod, node string) *framework.Status {
	*p.log = append(*p.log, "reserve "+p.name+" "+node)
	return p.reserve
}

func (p *recordingPlugin) Unreserve(_ context.Context, _ *framework.CycleState, _ *api.Pod, node string) {
	*p.log = append(*p.log, "unreserve "+p.name+" "+node)
}

func (p *recordingPlugin) PreBind(_ context.Context, _ *framework.CycleState, _ *api.Pod, node string) *framework.Status {
	*p.log = append(*p.log, "prebind "+p.name+" "+node)
	return p.preBind
}

func TestReserveAndPreBind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pod := schedtest.Pod("ns", "p", "", "")
	cases := []struct {
		name               string
		aReserve, bReserve *framework.Status
		bPreBind           *framework.Status
		aSkipPreBind       bool
		wantReserve        string // message of the Reserve run ("" success)
		wantCode           framework.Code
		wantPlugin         string
		wantPreBind        string
		wantLog            []string
	}{
		{
			name:    "all succeed",
			wantLog: []string{"reserve A n1", "reserve B n1", "unreserve B n1", "unreserve A n1", "prebind A n1", "prebind B n1"},
		},
		{
			name:        "reserve error stops the run and is wrapped",
			aReserve:    framework.AsStatus(errString("no room")),
			wantReserve: `running Reserve plugin "A": no room`,
			wantCode:    framework.Error,
			wantPlugin:  "A",
			wantLog:     []string{"reserve A n1", "unreserve B n1", "unreserve A n1", "prebind A n1", "prebind B n1"},
		},
		{
			name:        "reserve rejection is kept as it is",
			bReserve:    framework.NewStatus(framework.Unschedulable, "volume taken"),
			wantReserve: "volume taken",
			wantCode:    framework.Unschedulable,
			wantPlugin:  "B",
			wantLog:     []string{"reserve A n1", "reserve B n1", "unreserve B n1", "unreserve A n1", "prebind A n1", "prebind B n1"},
		},
		{
			name:         "a plugin skipped by its preflight",
			aSkipPreBind: true,
			wantLog:      []string{"reserve A n1", "reserve B n1", "unreserve B n1", "unreserve A n1", "prebind B n1"},
		},
		{
			name:        "prebind error is wrapped",
			bPreBind:    framework.AsStatus(errString("timed out")),
			wantPreBind: `running PreBind plugin "B": timed out`,
			wantLog:     []string{"reserve A n1", "reserve B n1", "unreserve B n1", "unreserve A n1", "prebind A n1", "prebind B n1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			a := &recordingPlugin{name: "A", log: &log, reserve: tc.aReserve, skipPreBind: tc.aSkipPreBind}
			b := &recordingPlugin{name: "B", log: &log, reserve: tc.bReserve, preBind: tc.bPreBind}
			f := framework.New([]framework.WeightedPlugin{{Plugin: a}, {Plugin: b}}, 1)
			state := framework.NewCycleState()
			st := f.RunReservePluginsReserve(ctx, state, pod, "n1")
			if got := st.AsError(); (got == nil) != (tc.wantReserve == "") || (got != nil && got.Error() != tc.wantReserve) {
				t.Fatalf("Reserve = %v, want %q", got, tc.wantReserve)
			}
			if tc.wantReserve != "" && (st.Code != tc.wantCode || st.Plugin != tc.wantPlugin) {
				t.Errorf("Reserve status code %v plugin %q, want %v %q", st.Code, st.Plugin, tc.wantCode, tc.wantPlugin)
			}
			f.RunReservePluginsUnreserve(ctx, state, pod, "n1")
			if st := f.RunPreBindPreFlights(ctx, state, pod, "n1"); !st.IsSuccess() {
				t.Fatalf("PreBindPreFlights = %v (one plugin has work)", st)
			}
			st = f.RunPreBindPlugins(ctx, state, pod, "n1")
			if got := st.AsError(); (got == nil) != (tc.wantPreBind == "") || (got != nil && got.Error() != tc.wantPreBind) {
				t.Fatalf("PreBind = %v, want %q", got, tc.wantPreBind)
			}
			if !slices.Equal(log, tc.wantLog) {
				t.Errorf("calls:\n got %q\nwant %q", log, tc.wantLog)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
