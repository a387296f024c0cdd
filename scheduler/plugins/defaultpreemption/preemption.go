package defaultpreemption

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler's profiles.
const Name = "DefaultPreemption"

// kube's DefaultPreemptionArgs defaults: dry-run at least 10% of the
// potential nodes, and at least 100 of them.
const (
	minCandidateNodesPercentage = 10
	minCandidateNodesAbsolute   = 100
)

// Messages kube's evaluator answers with.
const (
	msgPolicyNever         = "not eligible due to preemptionPolicy=Never."
	msgTerminatingOnNode   = "not eligible due to a terminating pod on the nominated node."
	msgNoVictims           = "No preemption victims found for incoming pod"
	msgNotHelpful          = "Preemption is not helpful for scheduling"
	msgNoCandidateSelected = "no candidate node for preemption"
)

// Handle is what the plugin needs of the scheduler.
type Handle interface {
	framework.Handle
	Filterer
	// PodDisruptionBudgets lists every PDB (the informer's, shared).
	PodDisruptionBudgets() []*api.PodDisruptionBudget
	// NominatedPodsForNode and NominatedNode read the scheduler's nominator.
	NominatedPodsForNode(node string) []*api.Pod
	NominatedNode(pod *api.Pod) string
}

// Evictor carries out a preemption through the API.
type Evictor interface {
	// Preempt marks victim with the DisruptionTarget condition, deletes
	// it and records the Preempted event; a victim already gone is not an
	// error.
	Preempt(ctx context.Context, preemptor, victim *api.Pod, node string) error
	// ClearNomination removes status.nominatedNodeName from pod.
	ClearNomination(ctx context.Context, pod *api.Pod) error
}

// Plugin is the DefaultPreemption PostFilter plugin.
type Plugin struct {
	h       Handle
	evictor Evictor
	metrics *Metrics
	log     *slog.Logger
	// offset picks where the dry run starts among the potential nodes
	// (random, as kube; tests fix it).
	offset func(n int) int
}

var _ framework.PostFilterPlugin = (*Plugin)(nil)

// New returns the plugin; metrics may be nil (then they are not kept).
func New(h Handle, evictor Evictor, metrics *Metrics, log *slog.Logger) *Plugin {
	if metrics == nil {
		metrics = NewMetrics()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Plugin{h: h, evictor: evictor, metrics: metrics, log: log, offset: rand.IntN}
}

// Name implements framework.Plugin.
func (*Plugin) Name() string { return Name }

// PostFilter implements framework.PostFilterPlugin: it preempts, and
// prefixes its message with "preemption: " as kube does.
func (pl *Plugin) PostFilter(ctx context.Context, state *framework.CycleState, pod *api.Pod, nodeToStatus map[string]*framework.Status) (*framework.PostFilterResult, *framework.Status) {
	defer pl.metrics.Attempts.Inc()
	result, st := pl.preempt(ctx, state, pod, nodeToStatus)
	if msg := st.Message(); msg != "" {
		return result, &framework.Status{Code: st.Code, Reasons: []string{"preemption: " + msg}}
	}
	return result, st
}

func (pl *Plugin) preempt(ctx context.Context, state *framework.CycleState, pod *api.Pod, nodeToStatus map[string]*framework.Status) (*framework.PostFilterResult, *framework.Status) {
	if ok, msg := pl.eligible(pod, nodeToStatus); !ok {
		return nil, framework.NewStatus(framework.Unschedulable, msg)
	}
	all := pl.h.SnapshotSharedLister().List()
	candidates, statuses, err := pl.findCandidates(ctx, state, all, pod, nodeToStatus)
	if err != nil && len(candidates) == 0 {
		return nil, framework.AsStatus(err)
	}
	if len(candidates) == 0 {
		msg := framework.FitErrorMessage(len(all), statuses, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNotHelpful), "", "")
		// A non-nil result without a node clears the pod's nomination.
		return &framework.PostFilterResult{}, framework.NewStatus(framework.Unschedulable, msg)
	}
	best := PickOneNodeForPreemption(candidates)
	if best == nil {
		return nil, framework.NewStatus(framework.Unschedulable, msgNoCandidateSelected)
	}
	pl.log.Info("preempting", "pod", pod.Namespace+"/"+pod.Name, "node", best.Node, "victims", len(best.Victims), "pdbViolations", best.NumPDBViolations)
	if err := pl.actuate(ctx, best, pod); err != nil {
		return nil, framework.AsStatus(err)
	}
	return &framework.PostFilterResult{NominatedNodeName: best.Node},
		framework.NewStatus(framework.Success, fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", best.Node, len(best.Victims)))
}

// eligible is kube's PodEligibleToPreemptOthers: not with
// preemptionPolicy Never, and not while a lower-priority pod on the node
// it is nominated to is still terminating because of a preemption (its
// earlier preemption is still under way) unless that node became
// unresolvable.
func (pl *Plugin) eligible(pod *api.Pod, nodeToStatus map[string]*framework.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == api.PreemptNever {
		return false, msgPolicyNever
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		// The status patch of this scheduler's own nomination may not be
		// back yet.
		nominated = pl.h.NominatedNode(pod)
	}
	if nominated == "" {
		return true, ""
	}
	// A node absent from the map counts as unresolvable, as kube's
	// NodeToStatus answers for absent nodes.
	if st, ok := nodeToStatus[nominated]; !ok || st.Code == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni, ok := pl.h.SnapshotSharedLister().Get(nominated); ok {
		prio := framework.PodPriority(pod)
		for _, pi := range ni.Pods {
			if framework.PodPriority(pi.Pod) < prio && TerminatingByPreemption(pi.Pod) {
				return false, msgTerminatingOnNode
			}
		}
	}
	return true, ""
}

// TerminatingByPreemption reports whether p is being deleted by a
// scheduler's preemption (kube's PodTerminatingByPreemption).
func TerminatingByPreemption(p *api.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == api.DisruptionTarget {
			return c.Status == api.ConditionTrue && c.Reason == api.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// numCandidates is kube's calculateNumCandidates.
func numCandidates(numNodes int) int {
	n := numNodes * minCandidateNodesPercentage / 100
	n = max(n, minCandidateNodesAbsolute)
	return min(n, numNodes)
}

// findCandidates dry-runs the preemption on the nodes whose rejection
// removing pods could resolve (status Unschedulable).
func (pl *Plugin) findCandidates(ctx context.Context, state *framework.CycleState, all []*framework.NodeInfo, pod *api.Pod, nodeToStatus map[string]*framework.Status) ([]*Candidate, map[string]*framework.Status, error) {
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("no nodes available")
	}
	var potential []*framework.NodeInfo
	for _, ni := range all {
		if st, ok := nodeToStatus[ni.Name]; ok && st.Code == framework.Unschedulable {
			potential = append(potential, ni)
		}
	}
	if len(potential) == 0 {
		return nil, map[string]*framework.Status{}, nil
	}
	pdbs := pl.h.PodDisruptionBudgets()
	return DryRunPreemption(ctx, pl.h, state, pod, potential, pdbs, pl.offset(len(potential)), numCandidates(len(potential)))
}

// actuate evicts the candidate's victims and clears the nominations of
// lower-priority pods on its node (kube's prepareCandidate).
func (pl *Plugin) actuate(ctx context.Context, c *Candidate, preemptor *api.Pod) error {
	pl.metrics.Victims.Observe(float64(len(c.Victims)))
	for _, v := range c.Victims {
		if v.DeletionTimestamp != nil {
			continue
		}
		if err := pl.evictor.Preempt(ctx, preemptor, v, c.Node); err != nil {
			return fmt.Errorf("preempt %s/%s: %w", v.Namespace, v.Name, err)
		}
	}
	prio := framework.PodPriority(preemptor)
	for _, p := range pl.h.NominatedPodsForNode(c.Node) {
		if framework.PodPriority(p) < prio && p.UID != preemptor.UID {
			if err := pl.evictor.ClearNomination(ctx, p); err != nil {
				pl.log.Warn("cannot clear the nomination of a lower-priority pod", "pod", p.Namespace+"/"+p.Name, "node", c.Node, "err", err)
			}
		}
	}
	return nil
}
