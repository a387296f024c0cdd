package defaultpreemption

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Candidate is a node where evicting Victims makes room for the preemptor.
type Candidate struct {
	Node string
	// Victims are ordered from the most to the least important.
	Victims          []*api.Pod
	NumPDBViolations int
}

// Filterer runs the filters of the scheduler's profile (the framework's
// methods of the same names).
type Filterer interface {
	Parallelizer() framework.Parallelizer
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *api.Pod, node *framework.NodeInfo) *framework.Status
	RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, podToSchedule *api.Pod, podToAdd *framework.PodInfo, node *framework.NodeInfo) *framework.Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, podToSchedule *api.Pod, podToRemove *framework.PodInfo, node *framework.NodeInfo) *framework.Status
}

// DryRunPreemption finds the victims on each potential node in parallel,
// starting at offset, until numCandidates candidates are found with at
// least one violating no PDB (kube's DryRunPreemption). Candidates that
// violate no PDB come first. The nodes that cannot become candidates get
// their status in the returned map.
func DryRunPreemption(ctx context.Context, f Filterer, state *framework.CycleState, pod *api.Pod, potential []*framework.NodeInfo, pdbs []*api.PodDisruptionBudget, offset, numCandidates int) ([]*Candidate, map[string]*framework.Status, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu                     sync.Mutex
		nonViolating, violated []*Candidate
		statuses               = map[string]*framework.Status{}
		errs                   []error
	)
	f.Parallelizer().Until(ctx, len(potential), func(i int) {
		ni := potential[(offset+i)%len(potential)]
		victims, violations, st := SelectVictimsOnNode(ctx, f, state.Clone(), pod, ni.Clone(), pdbs)
		if st.IsSuccess() && len(victims) == 0 {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Name))
		}
		mu.Lock()
		defer mu.Unlock()
		if st.IsSuccess() {
			c := &Candidate{Node: ni.Name, Victims: victims, NumPDBViolations: violations}
			if violations == 0 {
				nonViolating = append(nonViolating, c)
			} else {
				violated = append(violated, c)
			}
			if len(nonViolating) > 0 && len(nonViolating)+len(violated) >= numCandidates {
				cancel()
			}
			return
		}
		if st.Code == framework.Error {
			errs = append(errs, st.AsError())
		}
		statuses[ni.Name] = st
	})
	return append(nonViolating, violated...), statuses, errors.Join(errs...)
}

// SelectVictimsOnNode finds the fewest pods of lower priority to evict from
// node (a copy, changed here) so that pod fits, as kube's: remove every pod
// of lower priority; if pod still does not fit, the node is no candidate;
// else add the pods back from the most important on, PDB violators first,
// keeping each one that still leaves room. It returns the victims (most
// important first) and how many of them violate a PDB. The PreFilter
// state (state, a copy of the cycle's, changed here) follows each removal
// and addition through the PreFilterExtensions, as kube's.
func SelectVictimsOnNode(ctx context.Context, f Filterer, state *framework.CycleState, pod *api.Pod, node *framework.NodeInfo, pdbs []*api.PodDisruptionBudget) ([]*api.Pod, int, *framework.Status) {
	prio := framework.PodPriority(pod)
	var potential []*framework.PodInfo
	for _, pi := range node.Pods {
		if framework.PodPriority(pi.Pod) < prio {
			potential = append(potential, pi)
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNoVictims)
	}
	remove := func(pi *framework.PodInfo) error {
		if err := node.RemovePod(pi.Pod); err != nil {
			return err
		}
		return f.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, node).AsError()
	}
	for _, pi := range potential {
		if err := remove(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if st := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, node); !st.IsSuccess() {
		return nil, 0, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return MoreImportantPod(potential[i].Pod, potential[j].Pod) })
	violating, nonViolating := FilterPodsWithPDBViolation(potential, pdbs)
	var victims []*framework.PodInfo
	reprieve := func(pi *framework.PodInfo) (bool, error) {
		node.AddPodInfo(pi)
		if err := f.RunPreFilterExtensionAddPod(ctx, state, pod, pi, node).AsError(); err != nil {
			return false, err
		}
		if f.RunFilterPluginsWithNominatedPods(ctx, state, pod, node).IsSuccess() {
			return true, nil
		}
		if err := remove(pi); err != nil {
			return false, err
		}
		victims = append(victims, pi)
		return false, nil
	}
	numViolating := 0
	for _, pi := range violating {
		fits, err := reprieve(pi)
		if err != nil {
			return nil, 0, framework.AsStatus(err)
		}
		if !fits {
			numViolating++
		}
	}
	for _, pi := range nonViolating {
		if _, err := reprieve(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if len(violating) > 0 && len(nonViolating) > 0 {
		sort.SliceStable(victims, func(i, j int) bool { return MoreImportantPod(victims[i].Pod, victims[j].Pod) })
	}
	out := make([]*api.Pod, len(victims))
	for i, pi := range victims {
		out[i] = pi.Pod
	}
	return out, numViolating, nil
}

// MoreImportantPod orders victims: higher priority first, then the pod
// that started earlier (kube's MoreImportantVictim for single pods).
func MoreImportantPod(a, b *api.Pod) bool {
	pa, pb := framework.PodPriority(a), framework.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

// startTime is the pod's status.startTime; pods not started yet count as
// starting now (kube's GetPodStartTime).
func startTime(p *api.Pod) time.Time {
	if p.Status.StartTime != nil && !p.Status.StartTime.IsZero() {
		return p.Status.StartTime.Time
	}
	return time.Now()
}

// FilterPodsWithPDBViolation splits pods into those whose eviction would
// exceed a matching PDB's disruptionsAllowed (counting the pods in the
// order given) and the others, as kube's FilterVictimsWithPDBViolation. A
// PDB with a nil or empty selector matches nothing, and a pod already in a
// PDB's disruptedPods does not count against it.
func FilterPodsWithPDBViolation(pods []*framework.PodInfo, pdbs []*api.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		if sel, err := labels.SelectorFromLabelSelector(pdb.Spec.Selector); err == nil {
			selectors[i] = sel
		}
	}
	for _, pi := range pods {
		p := pi.Pod
		violates := false
		if len(p.Labels) > 0 {
			for i, pdb := range pdbs {
				sel := selectors[i]
				if pdb.Namespace != p.Namespace || sel == nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, ok := pdb.Status.DisruptedPods[p.Name]; ok {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violates = true
					break
				}
			}
		}
		if violates {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// PickOneNodeForPreemption picks the candidate by kube's criteria, each
// deciding only among the ties of the one before: fewest PDB violations;
// lowest priority of the most important victim; smallest sum of victim
// priorities; fewest victims; latest start among the highest-priority
// victims; then the first.
func PickOneNodeForPreemption(candidates []*Candidate) *Candidate {
	if len(candidates) == 0 {
		return nil
	}
	scores := []func(c *Candidate) int64{
		func(c *Candidate) int64 { return -int64(c.NumPDBViolations) },
		func(c *Candidate) int64 { return -int64(framework.PodPriority(c.Victims[0])) },
		func(c *Candidate) int64 {
			var sum int64
			for _, p := range c.Victims {
				// Shifted to be non-negative, so that a few pods of negative
				// priority do not beat fewer pods of the same priority.
				sum += int64(framework.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(c *Candidate) int64 { return -int64(len(c.Victims)) },
		func(c *Candidate) int64 { return earliestStartOfHighest(c.Victims).UnixNano() },
	}
	left := candidates
	for _, score := range scores {
		var best []*Candidate
		top := int64(math.MinInt64)
		for _, c := range left {
			s := score(c)
			if s > top {
				top, best = s, best[:0]
			}
			if s == top {
				best = append(best, c)
			}
		}
		if len(best) == 1 {
			return best[0]
		}
		left = best
	}
	return left[0]
}

// earliestStartOfHighest is the earliest start among the victims of the
// highest priority (kube's GetEarliestPodStartTime).
func earliestStartOfHighest(victims []*api.Pod) time.Time {
	earliest := startTime(victims[0])
	top := framework.PodPriority(victims[0])
	for _, p := range victims[1:] {
		switch prio := framework.PodPriority(p); {
		case prio == top:
			if t := startTime(p); t.Before(earliest) {
				earliest = t
			}
		case prio > top:
			top, earliest = prio, startTime(p)
		}
	}
	return earliest
}
