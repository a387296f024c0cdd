package framework

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// WeightedPlugin is a plugin of a profile with its score weight (ignored
// for plugins that do not score).
type WeightedPlugin struct {
	Plugin Plugin
	Weight int64
}

// Framework runs one profile's plugins at each extension point, in the
// order they were given.
type Framework struct {
	preFilter   []PreFilterPlugin
	filter      []FilterPlugin
	preScore    []PreScorePlugin
	score       []ScorePlugin
	scoreWeight []int64
	postFilter  []PostFilterPlugin
	reserve     []ReservePlugin
	preBind     []PreBindPlugin
	nominator   PodNominator
	par         Parallelizer
	// scoreBuf backs the per-plugin score lists, reused across cycles.
	scoreBuf []NodeScore
}

// New builds a framework from plugins; each plugin joins every extension
// point it implements. parallelism bounds the goroutines used for scoring.
func New(plugins []WeightedPlugin, parallelism int) *Framework {
	f := &Framework{par: Parallelizer{Workers: parallelism}}
	for _, wp := range plugins {
		if p, ok := wp.Plugin.(PreFilterPlugin); ok {
			f.preFilter = append(f.preFilter, p)
		}
		if p, ok := wp.Plugin.(FilterPlugin); ok {
			f.filter = append(f.filter, p)
		}
		if p, ok := wp.Plugin.(PreScorePlugin); ok {
			f.preScore = append(f.preScore, p)
		}
		if p, ok := wp.Plugin.(PostFilterPlugin); ok {
			f.postFilter = append(f.postFilter, p)
		}
		if p, ok := wp.Plugin.(ReservePlugin); ok {
			f.reserve = append(f.reserve, p)
		}
		if p, ok := wp.Plugin.(PreBindPlugin); ok {
			f.preBind = append(f.preBind, p)
		}
		if p, ok := wp.Plugin.(ScorePlugin); ok && wp.Weight > 0 {
			f.score = append(f.score, p)
			f.scoreWeight = append(f.scoreWeight, wp.Weight)
		}
	}
	return f
}

// Parallelizer returns the framework's parallelizer.
func (f *Framework) Parallelizer() Parallelizer { return f.par }

// SetPodNominator sets where RunFilterPluginsWithNominatedPods finds the
// nominated pods (nil: none are counted).
func (f *Framework) SetPodNominator(n PodNominator) { f.nominator = n }

// HasPostFilterPlugins reports whether any PostFilter plugin is configured.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// HasScorePlugins reports whether any score plugin is configured.
func (f *Framework) HasScorePlugins() bool { return len(f.score) > 0 }

// RunPreFilterPlugins runs every PreFilter; the first rejection or error
// ends the run (with Plugin set). Skip marks the plugin's Filter skipped.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *CycleState, pod *api.Pod) *Status {
	defer func() {
		state.filters = state.filters[:0]
		for _, p := range f.filter {
			if !state.SkipFilter[p.Name()] {
				state.filters = append(state.filters, p)
			}
		}
	}()
	for _, p := range f.preFilter {
		s := p.PreFilter(ctx, state, pod)
		if s.IsSkip() {
			state.SkipFilter[p.Name()] = true
			continue
		}
		if !s.IsSuccess() {
			s.Plugin = p.Name()
			if s.Code == Error {
				s.Err = fmt.Errorf("running PreFilter plugin %q: %w", p.Name(), s.AsError())
			}
			return s
		}
	}
	return nil
}

// RunFilterPlugins runs the filters for one node and returns the first
// failure (nil when the node fits). After RunPreFilterPlugins it runs only
// the filters not skipped.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *CycleState, pod *api.Pod, node *NodeInfo) *Status {
	filters := state.filters
	if filters == nil {
		filters = f.filter
	}
	for _, p := range filters {
		if s := p.Filter(ctx, state, pod, node); !s.IsSuccess() {
			s.Plugin = p.Name()
			if s.Code == Error {
				s.Err = fmt.Errorf("running Filter plugin %q: %w", p.Name(), s.AsError())
			}
			return s
		}
	}
	return nil
}

// RunPreScorePlugins runs every PreScore with the feasible nodes.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *CycleState, pod *api.Pod, nodes []*NodeInfo) *Status {
	for _, p := range f.preScore {
		s := p.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			state.SkipScore[p.Name()] = true
			continue
		}
		if !s.IsSuccess() {
			return AsStatus(fmt.Errorf("running PreScore plugin %q: %w", p.Name(), s.AsError()))
		}
	}
	return nil
}

// RunScorePlugins scores every node with every plugin (in parallel over
// nodes), normalizes each plugin's scores, and returns the weighted sums
// in the order of nodes. It reuses buffers between calls, so one framework
// scores one pod at a time (the scheduling loop's single cycle).
func (f *Framework) RunScorePlugins(ctx context.Context, state *CycleState, pod *api.Pod, nodes []*NodeInfo) ([]NodeScore, *Status) {
	var active []int
	for i, p := range f.score {
		if !state.SkipScore[p.Name()] {
			active = append(active, i)
		}
	}
	if need := len(active) * len(nodes); cap(f.scoreBuf) < need {
		f.scoreBuf = make([]NodeScore, need)
	}
	perPlugin := make([][]NodeScore, len(active))
	for j := range active {
		perPlugin[j] = f.scoreBuf[j*len(nodes) : (j+1)*len(nodes)]
	}
	errs := make([]*Status, len(nodes))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.par.Until(ctx, len(nodes), func(i int) {
		for j, pi := range active {
			s, st := f.score[pi].Score(ctx, state, pod, nodes[i])
			if !st.IsSuccess() {
				errs[i] = AsStatus(fmt.Errorf("running Score plugin %q: %w", f.score[pi].Name(), st.AsError()))
				cancel()
				return
			}
			perPlugin[j][i] = NodeScore{Name: nodes[i].Name, Score: s}
		}
	})
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	total := make([]NodeScore, len(nodes))
	for i := range nodes {
		total[i].Name = nodes[i].Name
	}
	for j, pi := range active {
		p := f.score[pi]
		if n, ok := p.(ScoreNormalizer); ok {
			if st := n.NormalizeScore(ctx, state, pod, perPlugin[j]); !st.IsSuccess() {
				return nil, AsStatus(fmt.Errorf("running NormalizeScore of %q: %w", p.Name(), st.AsError()))
			}
		}
		w := f.scoreWeight[pi]
		for i := range nodes {
			s := perPlugin[j][i].Score
			if s < MinNodeScore || s > MaxNodeScore {
				return nil, AsStatus(fmt.Errorf("plugin %q returned score %d for node %q, outside [%d, %d]", p.Name(), s, total[i].Name, MinNodeScore, MaxNodeScore))
			}
			total[i].Score += s * w
		}
	}
	return total, nil
}

// RunFilterPluginsWithNominatedPods runs the filters for pod on node as
// kube does: when pods of equal or higher priority are nominated to the
// node, the filters run twice, once with those pods counted (so pod does
// not take the room they preempted) and, if that passes, once without them
// (so pod's affinity to them is not satisfied by pods not yet there). Both
// must pass.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *api.Pod, node *NodeInfo) *Status {
	withNominated, nominatedState, err := f.addNominatedPods(ctx, state, pod, node)
	if err != nil {
		return AsStatus(err)
	}
	if withNominated == nil {
		return f.RunFilterPlugins(ctx, state, pod, node)
	}
	if s := f.RunFilterPlugins(ctx, nominatedState, pod, withNominated); !s.IsSuccess() {
		return s
	}
	return f.RunFilterPlugins(ctx, state, pod, node)
}

// addNominatedPods returns a copy of node with the nominated pods of
// priority at least pod's added, and a copy of state updated for them by
// the PreFilterExtensions, or nils when there are none.
func (f *Framework) addNominatedPods(ctx context.Context, state *CycleState, pod *api.Pod, node *NodeInfo) (*NodeInfo, *CycleState, error) {
	if f.nominator == nil || node.Node() == nil {
		return nil, nil, nil
	}
	nominated := f.nominator.NominatedPodsForNode(node.Name)
	if len(nominated) == 0 {
		return nil, nil, nil
	}
	var out *NodeInfo
	var outState *CycleState
	prio := PodPriority(pod)
	for _, p := range nominated {
		if p.UID == pod.UID || PodPriority(p) < prio {
			continue
		}
		if out == nil {
			out, outState = node.Clone(), state.Clone()
		}
		pi := NewPodInfo(p)
		out.AddPodInfo(pi)
		if s := f.RunPreFilterExtensionAddPod(ctx, outState, pod, pi, out); !s.IsSuccess() {
			return nil, nil, s.AsError()
		}
	}
	return out, outState, nil
}

// RunPreFilterExtensionAddPod tells the PreFilter plugins (not skipped)
// that implement PreFilterExtensions that podToAdd joined node.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *api.Pod, podToAdd *PodInfo, node *NodeInfo) *Status {
	for _, p := range f.preFilter {
		ext, ok := p.(PreFilterExtensions)
		if !ok || state.SkipFilter[p.Name()] {
			continue
		}
		if s := ext.AddPod(ctx, state, podToSchedule, podToAdd, node); !s.IsSuccess() {
			return AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", p.Name(), s.AsError()))
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod tells the PreFilter plugins (not
// skipped) that implement PreFilterExtensions that podToRemove left node.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *api.Pod, podToRemove *PodInfo, node *NodeInfo) *Status {
	for _, p := range f.preFilter {
		ext, ok := p.(PreFilterExtensions)
		if !ok || state.SkipFilter[p.Name()] {
			continue
		}
		if s := ext.RemovePod(ctx, state, podToSchedule, podToRemove, node); !s.IsSuccess() {
			return AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", p.Name(), s.AsError()))
		}
	}
	return nil
}

// RunPostFilterPlugins runs the PostFilter plugins after no node fitted,
// as kube: the first success or unresolvable verdict ends the run; else
// the rejections' reasons are joined and the last result kept.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *CycleState, pod *api.Pod, nodeToStatus map[string]*Status) (*PostFilterResult, *Status) {
	var result *PostFilterResult
	var reasons []string
	plugin := ""
	for _, p := range f.postFilter {
		r, s := p.PostFilter(ctx, state, pod, nodeToStatus)
		switch {
		case s.IsSuccess():
			return r, s
		case s.Code == UnschedulableAndUnresolvable:
			s.Plugin = p.Name()
			return r, s
		case !s.IsRejected():
			return nil, &Status{Code: Error, Reasons: s.Reasons, Err: fmt.Errorf("running PostFilter plugin %q: %w", p.Name(), s.AsError()), Plugin: p.Name()}
		case r != nil:
			result = r
		}
		reasons = append(reasons, s.Reasons...)
		if plugin == "" {
			plugin = p.Name()
		}
	}
	return result, &Status{Code: Unschedulable, Reasons: reasons, Plugin: plugin}
}

// RunReservePluginsReserve runs every Reserve in order; the first failure
// ends the run, with Plugin set (a rejection kept as it is, an error
// wrapped as kube's "running Reserve plugin ..."). The caller then runs
// RunReservePluginsUnreserve.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) *Status {
	for _, p := range f.reserve {
		s := p.Reserve(ctx, state, pod, nodeName)
		if s.IsSuccess() {
			continue
		}
		s.Plugin = p.Name()
		if !s.IsRejected() {
			s = &Status{Code: Error, Reasons: s.Reasons, Err: fmt.Errorf("running Reserve plugin %q: %w", p.Name(), s.AsError()), Plugin: p.Name()}
		}
		return s
	}
	return nil
}

// RunReservePluginsUnreserve runs every Unreserve, in the reverse order of
// the Reserves.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPreBindPreFlights asks every PreBind plugin whether it has work for
// the pod, as kube: Success when one has, Skip when none has (the
// skipped plugins are recorded in state), or the first error.
func (f *Framework) RunPreBindPreFlights(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) *Status {
	out := NewStatus(Skip)
	for _, p := range f.preBind {
		s := p.PreBindPreFlight(ctx, state, pod, nodeName)
		switch {
		case s.IsSuccess():
			out = nil
		case s.IsSkip():
			state.SkipPreBind[p.Name()] = true
		case s.Code == Error:
			return &Status{Code: Error, Reasons: s.Reasons, Err: fmt.Errorf("running PreBindPreFlight %q: %w", p.Name(), s.AsError()), Plugin: p.Name()}
		default:
			return AsStatus(fmt.Errorf("PreBindPreFlight %s returned %q, which is unsupported. It is supposed to return Success, Skip, or Error status", p.Name(), s.Message()))
		}
	}
	return out
}

// RunPreBindPlugins runs every PreBind not skipped by its PreBindPreFlight,
// in order; the first failure ends the run, as RunReservePluginsReserve
// ("running PreBind plugin ...").
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) *Status {
	for _, p := range f.preBind {
		if state.SkipPreBind[p.Name()] {
			continue
		}
		s := p.PreBind(ctx, state, pod, nodeName)
		if s.IsSuccess() {
			continue
		}
		s.Plugin = p.Name()
		if !s.IsRejected() {
			s = &Status{Code: Error, Reasons: s.Reasons, Err: fmt.Errorf("running PreBind plugin %q: %w", p.Name(), s.AsError()), Plugin: p.Name()}
		}
		return s
	}
	return nil
}

// PodPriority is the pod's spec.priority, 0 when unset.
func PodPriority(p *api.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}
