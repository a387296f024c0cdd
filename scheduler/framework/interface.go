package framework

import (
	"context"
	"errors"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// Code is the outcome class of a plugin call.
type Code int

// Codes, as kube's framework.Code.
const (
	// Success: the plugin passed (nil *Status means Success too).
	Success Code = iota
	// Error: an internal error; the pod is retried with back-off.
	Error
	// Unschedulable: the node does not fit now, but it might after the
	// cluster changes (pods leave, nodes change).
	Unschedulable
	// UnschedulableAndUnresolvable: the node does not fit, and changing
	// other pods (preemption) cannot help.
	UnschedulableAndUnresolvable
	// Skip from a PreFilter or PreScore: the plugin has nothing to do for
	// this pod; its Filter or Score is not called.
	Skip
)

// Status is a plugin's verdict; nil means Success.
type Status struct {
	Code    Code
	Reasons []string
	Err     error
	// Plugin names the plugin that failed (set by the Framework).
	Plugin string
}

// NewStatus returns a status with code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{Code: code, Reasons: reasons}
}

// AsStatus wraps an internal error.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{Code: Error, Reasons: []string{err.Error()}, Err: err}
}

// IsSuccess reports whether s is nil or Success.
func (s *Status) IsSuccess() bool { return s == nil || s.Code == Success }

// IsSkip reports whether s is Skip.
func (s *Status) IsSkip() bool { return s != nil && s.Code == Skip }

// IsRejected reports whether s says the pod does not fit (either
// unschedulable code).
func (s *Status) IsRejected() bool {
	return s != nil && (s.Code == Unschedulable || s.Code == UnschedulableAndUnresolvable)
}

// AsError returns the status as an error (nil for success).
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.Err != nil {
		return s.Err
	}
	return errors.New(s.Message())
}

// Message joins the reasons.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons, ", ")
}

// Plugin is the parent of every plugin interface.
type Plugin interface {
	Name() string
}

// PreFilterPlugin runs once per pod before the filters, to compute state
// the Filter calls share (through CycleState). A rejection rejects the pod
// on every node.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *api.Pod) *Status
}

// PreFilterExtensions is implemented by PreFilter plugins whose state
// depends on the pods of the nodes: when a what-if adds a pod to a node
// (a nominated pod) or removes one (a preemption victim), they update the
// (cloned) state to match.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *api.Pod, podToAdd *PodInfo, node *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *api.Pod, podToRemove *PodInfo, node *NodeInfo) *Status
}

// FilterPlugin decides whether pod can run on one node. Filter is called
// from several goroutines at once (one node each) and may only read state.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *api.Pod, node *NodeInfo) *Status
}

// PreScorePlugin runs once per pod before scoring, with the feasible nodes.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *api.Pod, nodes []*NodeInfo) *Status
}

// ScorePlugin ranks one feasible node. Score is called from several
// goroutines at once and may only read state.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *api.Pod, node *NodeInfo) (int64, *Status)
}

// ScoreNormalizer is implemented by score plugins whose raw scores must be
// mapped into [MinNodeScore, MaxNodeScore] once all nodes are scored.
type ScoreNormalizer interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *api.Pod, scores []NodeScore) *Status
}

// PostFilterResult is what a PostFilter plugin proposes: the node the pod
// is nominated to once the victims are gone.
type PostFilterResult struct {
	NominatedNodeName string
}

// PostFilterPlugin runs when no node fits the pod (kube's PostFilter, the
// home of preemption). nodeToStatus holds the failed filter's status of
// every rejected node. A Success status carries a result; Unschedulable
// with a non-nil result whose NominatedNodeName is empty clears a previous
// nomination, and a nil result keeps it.
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *api.Pod, nodeToStatus map[string]*Status) (*PostFilterResult, *Status)
}

// ReservePlugin is told which node the pod was assumed on (kube's
// Reserve), after the scheduling cycle picked it and before the binding
// cycle starts, so it can set aside what the pod will use there (volumes
// to bind). Reserve runs in the scheduling loop, one pod at a time. When a
// later step fails (a Reserve of another plugin, a PreBind, the binding),
// Unreserve undoes it; Unreserve must be idempotent and may be called
// without a preceding Reserve of this plugin.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string)
}

// PreBindPlugin runs in the binding cycle, off the scheduling loop, before
// the pod's Binding is posted: it makes the API writes the pod needs first
// (volumes bound or provisioned) and may wait for them. A failure
// unreserves the pod and retries it with back-off. PreBindPreFlight,
// called first, says whether PreBind has anything to do for the pod:
// Success, Skip (its PreBind is not called), or an error.
type PreBindPlugin interface {
	Plugin
	PreBindPreFlight(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) *Status
	PreBind(ctx context.Context, state *CycleState, pod *api.Pod, nodeName string) *Status
}

// PodNominator lists the pods nominated to a node (pending pods that
// preempted room there).
type PodNominator interface {
	NominatedPodsForNode(node string) []*api.Pod
}

// Score bounds.
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
)

// NodeScore is one node's score.
type NodeScore struct {
	Name  string
	Score int64
}

// SharedLister is the snapshot of all nodes a cycle sees.
type SharedLister interface {
	// List returns every node with a Node object.
	List() []*NodeInfo
	// HavePodsWithRequiredAntiAffinity lists the nodes holding at least
	// one pod with required anti-affinity terms.
	HavePodsWithRequiredAntiAffinity() []*NodeInfo
	// HavePodsWithAffinity lists the nodes holding at least one pod with
	// any affinity or anti-affinity term.
	HavePodsWithAffinity() []*NodeInfo
	// Get returns the named node.
	Get(name string) (*NodeInfo, bool)
}

// Handle is what plugins get from the scheduler at construction.
type Handle interface {
	// SnapshotSharedLister returns the snapshot of the current cycle.
	SnapshotSharedLister() SharedLister
}

// DefaultNormalizeScore scales scores so the highest becomes maxPriority
// (and, with reverse, the highest becomes the lowest), as kube's helper.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores []NodeScore) {
	var maxCount int64
	for i := range scores {
		maxCount = max(maxCount, scores[i].Score)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return
	}
	for i := range scores {
		s := maxPriority * scores[i].Score / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
}
