package noderesources

import (
	"context"
	"sort"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/framework"
)

// Names of the plugins.
const (
	FitName                = "NodeResourcesFit"
	BalancedAllocationName = "NodeResourcesBalancedAllocation"
)

// ErrReasonTooManyPods is kube's reason when the node's pod slots are used up.
const ErrReasonTooManyPods = "Too many pods"

const fitStateKey framework.StateKey = "PreFilter" + FitName

// Fit is the NodeResourcesFit filter and its LeastAllocated score over cpu
// and memory (weight 1 each), kube's default scoring strategy.
type Fit struct{}

var (
	_ framework.PreFilterPlugin = Fit{}
	_ framework.FilterPlugin    = Fit{}
	_ framework.ScorePlugin     = Fit{}
)

// Name implements framework.Plugin.
func (Fit) Name() string { return FitName }

type podRequests struct{ req, nonZero framework.Resource }

// requests returns the pod's requests from the cycle state, computing them
// when PreFilter did not run.
func requests(state *framework.CycleState, pod *api.Pod) *podRequests {
	if v, ok := state.Read(fitStateKey); ok {
		return v.(*podRequests)
	}
	r, nz := framework.PodRequests(pod)
	return &podRequests{r, nz}
}

// PreFilter implements framework.PreFilterPlugin: it computes the pod's
// requests once per cycle.
func (Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *api.Pod) *framework.Status {
	r, nz := framework.PodRequests(pod)
	state.Write(fitStateKey, &podRequests{r, nz})
	return nil
}

// Filter implements framework.FilterPlugin.
func (Fit) Filter(_ context.Context, state *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) *framework.Status {
	reasons := Insufficient(requests(state, pod).req, n)
	if len(reasons) == 0 {
		return nil
	}
	return framework.NewStatus(framework.Unschedulable, reasons...)
}

// Insufficient lists kube's reasons ("Too many pods", "Insufficient cpu",
// ...) why a pod requesting req does not fit on n.
func Insufficient(req framework.Resource, n *framework.NodeInfo) []string {
	var reasons []string
	for _, r := range Fits(req, n) {
		reasons = append(reasons, r.Reason)
	}
	return reasons
}

// InsufficientResource is one resource a pod does not fit in, with the
// amounts kube's kubelet puts in its admission message: what the pod
// requests, what the node's pods use, and the node's allocatable.
type InsufficientResource struct {
	ResourceName api.ResourceName
	// Reason is the scheduler's ("Insufficient cpu", "Too many pods").
	Reason                    string
	Requested, Used, Capacity int64
}

// Fits is kube's fitsRequest: each resource a pod requesting req does not
// fit in on n, in kube's order (pods, cpu, memory, ephemeral-storage,
// then extended resources by name).
func Fits(req framework.Resource, n *framework.NodeInfo) []InsufficientResource {
	var out []InsufficientResource
	if used := int64(len(n.Pods)); used+1 > n.Allocatable.AllowedPodNumber {
		out = append(out, InsufficientResource{api.ResourcePods, ErrReasonTooManyPods, 1, used, n.Allocatable.AllowedPodNumber})
	}
	check := func(name api.ResourceName, want, used, capacity int64) {
		if want > 0 && want > capacity-used {
			out = append(out, InsufficientResource{name, "Insufficient " + string(name), want, used, capacity})
		}
	}
	check(api.ResourceCPU, req.MilliCPU, n.Requested.MilliCPU, n.Allocatable.MilliCPU)
	check(api.ResourceMemory, req.Memory, n.Requested.Memory, n.Allocatable.Memory)
	check(api.ResourceEphemeralStorage, req.EphemeralStorage, n.Requested.EphemeralStorage, n.Allocatable.EphemeralStorage)
	names := make([]string, 0, len(req.Scalar))
	for name := range req.Scalar {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		rn := api.ResourceName(name)
		check(rn, req.Scalar[rn], n.Requested.Scalar[rn], n.Allocatable.Scalar[rn])
	}
	return out
}

// Score implements framework.ScorePlugin: kube's LeastAllocated, the mean
// over cpu and memory of (allocatable - requested) * 100 / allocatable,
// with the pod's own requests counted and unset requests defaulted.
func (Fit) Score(_ context.Context, state *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	nz := requests(state, pod).nonZero
	cpu := leastAllocated(n.NonZeroRequested.MilliCPU+nz.MilliCPU, n.Allocatable.MilliCPU)
	mem := leastAllocated(n.NonZeroRequested.Memory+nz.Memory, n.Allocatable.Memory)
	return (cpu + mem) / 2, nil
}

func leastAllocated(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// BalancedAllocation is NodeResourcesBalancedAllocation: it scores
// (1 - standard deviation of the cpu and memory fractions) * 100, so a pod
// goes where it leaves cpu and memory use closest to each other.
type BalancedAllocation struct{}

var _ framework.ScorePlugin = BalancedAllocation{}

// Name implements framework.Plugin.
func (BalancedAllocation) Name() string { return BalancedAllocationName }

// Score implements framework.ScorePlugin.
func (BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *api.Pod, n *framework.NodeInfo) (int64, *framework.Status) {
	nz := requests(state, pod).nonZero
	cpu := fraction(n.NonZeroRequested.MilliCPU+nz.MilliCPU, n.Allocatable.MilliCPU)
	mem := fraction(n.NonZeroRequested.Memory+nz.Memory, n.Allocatable.Memory)
	// The standard deviation of two values is half their distance.
	std := cpu - mem
	if std < 0 {
		std = -std
	}
	std /= 2
	return int64((1 - std) * float64(framework.MaxNodeScore)), nil
}

func fraction(requested, capacity int64) float64 {
	if capacity == 0 {
		return 1
	}
	f := float64(requested) / float64(capacity)
	return min(f, 1)
}
