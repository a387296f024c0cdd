package scheduling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/queue"
)

// Numbers behind percentageOfNodesToScore, as kube's.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// Pod condition reasons the scheduler sets.
const (
	reasonUnschedulable  = api.PodReasonUnschedulable
	reasonSchedulerError = "SchedulerError"
)

// scheduleOne runs one scheduling cycle: pop, filter, score, assume, and
// start the binding. It returns an error only when the queue closed.
func (s *Scheduler) scheduleOne(ctx context.Context) error {
	qpi, err := s.Queue.Pop()
	if err != nil {
		return err
	}
	cycle := s.Queue.SchedulingCycle()
	pod := qpi.Pod
	if pod.DeletionTimestamp != nil || s.Cache.IsAssumed(pod) {
		return nil
	}
	start := time.Now()
	s.Cache.UpdateSnapshot(s.snapshot)
	state := framework.NewCycleState()
	host, err := s.schedulePod(ctx, state, pod)
	if err != nil {
		var fe *FitError
		fit := errors.As(err, &fe)
		unschedulable := fit || errors.Is(err, ErrNoNodesAvailable)
		// Any failure but a FitError clears the pod's nomination; after a
		// FitError preemption decides.
		nominating := &nomination{}
		if fit && s.fwk.HasPostFilterPlugins() {
			nominating = s.runPostFilter(ctx, state, pod, fe)
		}
		result := ResultError
		if unschedulable {
			result = ResultUnschedulable
			s.Stats.Unschedulable.Add(1)
		} else {
			s.Stats.Errors.Add(1)
			s.log.Error("scheduling pod failed", "pod", queue.Key(pod), "err", err)
		}
		s.observe(result, start)
		s.handleFailure(ctx, qpi, err, unschedulable, cycle, nominating)
		return nil
	}
	// Assume on a shallow copy: the informer's object stays untouched and
	// only the copy's spec.nodeName differs.
	assumed := *pod
	assumed.Spec.NodeName = host
	if err := s.Cache.AssumePod(&assumed); err != nil {
		s.Stats.Errors.Add(1)
		s.observe(ResultError, start)
		s.handleFailure(ctx, qpi, err, false, cycle, &nomination{})
		return nil
	}
	// Reserve: the plugins set aside what the pod uses on host (volumes).
	if st := s.fwk.RunReservePluginsReserve(ctx, state, &assumed, host); !st.IsSuccess() {
		s.fwk.RunReservePluginsUnreserve(ctx, state, &assumed, host)
		if ferr := s.Cache.ForgetPod(&assumed); ferr != nil {
			s.log.Error("forget assumed pod", "pod", queue.Key(&assumed), "err", ferr)
		}
		var err error = st.AsError()
		unschedulable := st.IsRejected()
		if unschedulable {
			err = &FitError{NumAllNodes: 1, Diagnosis: Diagnosis{
				NodeToStatus:         map[string]*framework.Status{host: st},
				UnschedulablePlugins: map[string]bool{st.Plugin: true},
			}}
			s.Stats.Unschedulable.Add(1)
			s.observe(ResultUnschedulable, start)
		} else {
			s.Stats.Errors.Add(1)
			s.observe(ResultError, start)
			s.log.Error("reserving pod failed", "pod", queue.Key(pod), "node", host, "err", err)
		}
		s.handleFailure(ctx, qpi, err, unschedulable, cycle, &nomination{})
		return nil
	}
	s.Nominator.DeleteNominatedPodIfExists(pod)
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		s.bind(ctx, state, qpi, &assumed, cycle, start)
	}()
	return nil
}

// errCycleStateNotFound is kube's CycleState.Read error (fwk.ErrNotFound).
const errCycleStateNotFound = "not found"

// nomination is what a failed cycle does to the pod's nominated node: a
// nil *nomination keeps it, an empty node clears it.
type nomination struct{ node string }

// runPostFilter runs preemption after no node fitted; its message joins
// the FitError's, and its result says what becomes of the nomination.
func (s *Scheduler) runPostFilter(ctx context.Context, state *framework.CycleState, pod *api.Pod, fe *FitError) *nomination {
	if fe.Diagnosis.PreFilterMsg != "" {
		// kube-scheduler v1.37's first PostFilter plugin, DynamicResources,
		// reads the state its PreFilter writes; a PreFilter ordered before
		// it (all of ours) rejecting the pod leaves none, and the read's
		// error, "not found", ends the PostFilter run before preemption:
		// kube's message reads "0/2 nodes are available: <reason>. not
		// found", and the nomination is kept.
		fe.Diagnosis.PostFilterMsg = errCycleStateNotFound
		s.metrics.FrameworkExtension.WithLabelValues("PostFilter", "Error", s.cfg.SchedulerName).Observe(0)
		return nil
	}
	t0 := time.Now()
	result, st := s.fwk.RunPostFilterPlugins(ctx, state, pod, fe.Diagnosis.NodeToStatus)
	s.metrics.FrameworkExtension.WithLabelValues("PostFilter", statusLabel(st), s.cfg.SchedulerName).Observe(time.Since(t0).Seconds())
	fe.Diagnosis.PostFilterMsg = st.Message()
	if st != nil && st.Code == framework.Error {
		s.log.Error("preemption failed", "pod", queue.Key(pod), "err", st.AsError())
	}
	if result == nil {
		return nil
	}
	return &nomination{node: result.NominatedNodeName}
}

func (s *Scheduler) observe(result string, start time.Time) {
	d := time.Since(start).Seconds()
	s.metrics.ScheduleAttempts.WithLabelValues(result, s.cfg.SchedulerName).Inc()
	s.metrics.AttemptDuration.WithLabelValues(result, s.cfg.SchedulerName).Observe(d)
	s.metrics.E2EDuration.WithLabelValues(result, s.cfg.SchedulerName).Observe(d)
}

// bind is the binding cycle: the PreBind plugins (volumes bound, which
// may take long), then the Binding. A pod already bound or gone is
// dropped; any other failure unreserves the pod, forgets the assumption
// and retries the pod with back-off. When the scheduler stops (ctx ends),
// bindings still waiting (for volumes, for the client's rate limiter) are
// abandoned rather than sent: the next leader schedules those pods, and
// the apiserver refuses any second binding.
func (s *Scheduler) bind(ctx context.Context, state *framework.CycleState, qpi *queue.QueuedPodInfo, assumed *api.Pod, cycle int64, start time.Time) {
	var err error
	posted := false // err is the Binding's refusal
	host := assumed.Spec.NodeName
	preFlight := s.fwk.RunPreBindPreFlights(ctx, state, assumed, host)
	if preFlight.IsSuccess() {
		// PreBind will work (and may wait): tell other components where
		// the pod goes, as kube does (NominatedNodeNameForExpectation).
		s.patchNominatedNodeName(ctx, assumed, host)
	}
	if !preFlight.IsSuccess() && !preFlight.IsSkip() {
		err = preFlight.AsError()
	} else if st := s.fwk.RunPreBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
		err = st.AsError()
	} else {
		bctx, cancel := context.WithTimeout(ctx, s.cfg.BindTimeout)
		b := &api.Binding{
			TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Binding"},
			ObjectMeta: api.ObjectMeta{Name: assumed.Name, Namespace: assumed.Namespace, UID: assumed.UID},
			Target:     api.ObjectReference{Kind: "Node", Name: assumed.Spec.NodeName},
		}
		err = s.pods.Namespace(assumed.Namespace).Subresource(assumed.Name, "binding").Post(bctx, b, nil)
		cancel()
		if err != nil {
			posted = true
			err = fmt.Errorf("binding rejected: %w", err)
		}
	}
	if err != nil {
		s.fwk.RunReservePluginsUnreserve(ctx, state, assumed, assumed.Spec.NodeName)
		if ferr := s.Cache.ForgetPod(assumed); ferr != nil {
			s.log.Error("forget assumed pod", "pod", queue.Key(assumed), "err", ferr)
		}
		if ctx.Err() != nil {
			s.Stats.Abandoned.Add(1)
			s.log.Info("binding abandoned: scheduler stopping", "pod", queue.Key(assumed), "node", assumed.Spec.NodeName)
			return
		}
		s.observe(ResultError, start)
		if posted && (apierrors.IsConflict(err) || apierrors.IsNotFound(err)) {
			s.Stats.BindConflicts.Add(1)
			s.log.Info("dropping pod: binding refused (already bound, or gone)", "pod", queue.Key(assumed), "node", assumed.Spec.NodeName, "err", err)
			return
		}
		s.Stats.Errors.Add(1)
		s.log.Warn("binding failed; retrying with back-off", "pod", queue.Key(assumed), "node", assumed.Spec.NodeName, "err", err)
		// The forgotten pod's resources are free again.
		s.Queue.MoveAllToActiveOrBackoffQueue()
		s.handleFailure(ctx, qpi, err, false, cycle, &nomination{})
		return
	}
	s.Cache.FinishBinding(assumed)
	s.Stats.Scheduled.Add(1)
	s.observe(ResultScheduled, start)
	s.metrics.PodSchedulingSLI.WithLabelValues(strconv.Itoa(min(qpi.Attempts, 15))).Observe(time.Since(qpi.InitialAttemptTimestamp).Seconds())
	s.recorder.Eventf(assumed, api.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", assumed.Namespace, assumed.Name, assumed.Spec.NodeName)
	s.log.Debug("pod bound", "pod", queue.Key(assumed), "node", assumed.Spec.NodeName, "attempts", qpi.Attempts)
}

// patchNominatedNodeName sets the pod's status.nominatedNodeName to node,
// logging a failure (the binding goes on without it).
func (s *Scheduler) patchNominatedNodeName(ctx context.Context, pod *api.Pod, node string) {
	if pod.Status.NominatedNodeName == node {
		return
	}
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"nominatedNodeName": node}})
	pctx, cancel := context.WithTimeout(ctx, s.cfg.BindTimeout)
	defer cancel()
	if _, err := s.pods.Namespace(pod.Namespace).Patch(pctx, pod.Name, client.StrategicMergePatchType, body, "status"); err != nil && ctx.Err() == nil {
		s.log.Warn("could not set the nominated node of a pod in binding", "pod", queue.Key(pod), "node", node, "err", err)
	}
}

// schedulePod picks a node for pod: filter, score, select.
func (s *Scheduler) schedulePod(ctx context.Context, state *framework.CycleState, pod *api.Pod) (string, error) {
	nodes := s.snapshot.List()
	if len(nodes) == 0 {
		return "", ErrNoNodesAvailable
	}
	feasible, diagnosis, err := s.findNodesThatFit(ctx, state, pod, nodes)
	if err != nil {
		return "", err
	}
	if len(feasible) == 0 {
		return "", &FitError{NumAllNodes: len(nodes), Diagnosis: diagnosis}
	}
	if len(feasible) == 1 {
		return feasible[0].Name, nil
	}
	scores, err := s.prioritizeNodes(ctx, state, pod, feasible)
	if err != nil {
		return "", err
	}
	return selectHost(scores), nil
}

// NumFeasibleNodesToFind is kube's: all nodes below 100; else the
// configured percentage, or adaptively 50% minus 1% per 125 nodes (at least
// 5%), and never fewer than 100 nodes.
func NumFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind || percentage >= 100 {
		return numAllNodes
	}
	adaptive := int(percentage)
	if adaptive <= 0 {
		adaptive = 50 - numAllNodes/125
		if adaptive < minFeasibleNodesPercentageToFind {
			adaptive = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * adaptive / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// findNodesThatFit runs the filters over the nodes in parallel, starting
// where the previous cycle stopped, until enough feasible nodes are found.
func (s *Scheduler) findNodesThatFit(ctx context.Context, state *framework.CycleState, pod *api.Pod, nodes []*framework.NodeInfo) ([]*framework.NodeInfo, Diagnosis, error) {
	diagnosis := Diagnosis{NodeToStatus: map[string]*framework.Status{}, UnschedulablePlugins: map[string]bool{}}
	t0 := time.Now()
	st := s.fwk.RunPreFilterPlugins(ctx, state, pod)
	s.metrics.FrameworkExtension.WithLabelValues("PreFilter", statusLabel(st), s.cfg.SchedulerName).Observe(time.Since(t0).Seconds())
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, st.AsError()
		}
		diagnosis.PreFilterMsg = st.Message()
		diagnosis.UnschedulablePlugins[st.Plugin] = true
		for _, n := range nodes {
			diagnosis.NodeToStatus[n.Name] = st
		}
		return nil, diagnosis, nil
	}
	t0 = time.Now()
	// A node nominated by an earlier preemption is likely the only one
	// that fits: try it first, as kube does.
	if nn := s.nominatedNode(pod); nn != "" {
		if ni, ok := s.snapshot.Get(nn); ok && ni.Node() != nil {
			if st := s.fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); st.IsSuccess() {
				return []*framework.NodeInfo{ni}, diagnosis, nil
			}
		}
	}
	n := len(nodes)
	want := NumFeasibleNodesToFind(s.cfg.PercentageOfNodesToScore, n)
	feasible := make([]*framework.NodeInfo, want)
	// statuses is reused across cycles (one scheduling loop) to spare the
	// garbage collector a node-sized slice per pod.
	if cap(s.statusBuf) < n {
		s.statusBuf = make([]*framework.Status, n)
	}
	statuses := s.statusBuf[:n]
	defer clear(statuses)
	var found, processed atomic.Int32
	var firstErr atomic.Pointer[framework.Status]
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := s.nextStartNodeIndex % n
	s.fwk.Parallelizer().Until(fctx, n, func(i int) {
		idx := (start + i) % n
		ni := nodes[idx]
		st := s.fwk.RunFilterPluginsWithNominatedPods(fctx, state, pod, ni)
		if st.IsSuccess() {
			k := found.Add(1)
			if int(k) > want {
				found.Add(-1)
				cancel()
				return
			}
			feasible[k-1] = ni
			processed.Add(1)
			return
		}
		processed.Add(1)
		if !st.IsRejected() {
			firstErr.CompareAndSwap(nil, st)
			cancel()
			return
		}
		statuses[idx] = st
	})
	s.metrics.FrameworkExtension.WithLabelValues("Filter", "Success", s.cfg.SchedulerName).Observe(time.Since(t0).Seconds())
	if e := firstErr.Load(); e != nil {
		return nil, diagnosis, e.AsError()
	}
	if ctx.Err() != nil {
		return nil, diagnosis, ctx.Err()
	}
	s.nextStartNodeIndex = (start + int(processed.Load())) % n
	for idx, st := range statuses {
		if st != nil {
			diagnosis.NodeToStatus[nodes[idx].Name] = st
			diagnosis.UnschedulablePlugins[st.Plugin] = true
		}
	}
	return feasible[:found.Load()], diagnosis, nil
}

func statusLabel(st *framework.Status) string {
	switch {
	case st.IsSuccess():
		return "Success"
	case st.IsRejected():
		return "Unschedulable"
	}
	return "Error"
}

// prioritizeNodes scores the feasible nodes with every score plugin.
func (s *Scheduler) prioritizeNodes(ctx context.Context, state *framework.CycleState, pod *api.Pod, nodes []*framework.NodeInfo) ([]framework.NodeScore, error) {
	if !s.fwk.HasScorePlugins() {
		out := make([]framework.NodeScore, len(nodes))
		for i, n := range nodes {
			out[i] = framework.NodeScore{Name: n.Name, Score: 1}
		}
		return out, nil
	}
	t0 := time.Now()
	if st := s.fwk.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return nil, st.AsError()
	}
	scores, st := s.fwk.RunScorePlugins(ctx, state, pod, nodes)
	s.metrics.FrameworkExtension.WithLabelValues("Score", statusLabel(st), s.cfg.SchedulerName).Observe(time.Since(t0).Seconds())
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	return scores, nil
}

// selectHost returns the best-scored node, breaking ties uniformly at
// random (reservoir sampling, as kube).
func selectHost(scores []framework.NodeScore) string {
	best := scores[0]
	ties := 1
	for _, ns := range scores[1:] {
		switch {
		case ns.Score > best.Score:
			best, ties = ns, 1
		case ns.Score == best.Score:
			ties++
			if rand.IntN(ties) == 0 {
				best = ns
			}
		}
	}
	return best.Name
}

// nominatedNode is the node pod is nominated to: its status says, or this
// scheduler nominated it and the status patch is not back yet.
func (s *Scheduler) nominatedNode(pod *api.Pod) string {
	if pod.Status.NominatedNodeName != "" {
		return pod.Status.NominatedNodeName
	}
	return s.Nominator.NominatedNode(pod)
}

// handleFailure requeues the pod (unless it was deleted or bound
// meanwhile), records its nomination, records FailedScheduling, and sets
// PodScheduled=False (and status.nominatedNodeName when it changed).
func (s *Scheduler) handleFailure(ctx context.Context, qpi *queue.QueuedPodInfo, err error, unschedulable bool, cycle int64, nominating *nomination) {
	cached, gerr := s.podLister.Namespace(qpi.Pod.Namespace).Get(qpi.Pod.Name)
	if gerr != nil || cached.UID != qpi.Pod.UID || assigned(cached) {
		return // deleted, replaced or bound meanwhile: nothing to retry
	}
	qpi.Pod = cached
	switch {
	case nominating == nil:
		if cached.Status.NominatedNodeName != "" {
			s.Nominator.AddNominatedPod(cached, cached.Status.NominatedNodeName)
		}
	case nominating.node == "":
		s.Nominator.DeleteNominatedPodIfExists(cached)
	default:
		s.Nominator.AddNominatedPod(cached, nominating.node)
	}
	s.Queue.AddUnschedulableIfNotPresent(qpi, unschedulable, cycle)
	msg := err.Error()
	s.recorder.Event(cached, api.EventTypeWarning, "FailedScheduling", msg)
	reason := reasonUnschedulable
	if !unschedulable {
		reason = reasonSchedulerError
	}
	s.updateCondition(ctx, cached, reason, msg, nominating)
}

// updateCondition patches PodScheduled=False with reason and message into
// the pod's status (a strategic merge patch: conditions merge by type),
// unless the pod says so already, and status.nominatedNodeName when
// nominating changes it (kube's updatePod).
func (s *Scheduler) updateCondition(ctx context.Context, pod *api.Pod, reason, msg string, nominating *nomination) {
	cond := map[string]any{"type": api.PodScheduled, "status": api.ConditionFalse, "reason": reason, "message": msg}
	condChanged, transition := true, true
	for _, c := range pod.Status.Conditions {
		if c.Type != api.PodScheduled {
			continue
		}
		if c.Status == api.ConditionFalse {
			if c.Reason == reason && c.Message == msg {
				condChanged = false
			}
			transition = false
		}
	}
	nnnChanged := nominating != nil && pod.Status.NominatedNodeName != nominating.node
	if !condChanged && !nnnChanged {
		return
	}
	if transition {
		cond["lastTransitionTime"] = api.Now()
	}
	status := map[string]any{}
	if condChanged {
		status["conditions"] = []any{cond}
	}
	if nnnChanged {
		if nominating.node == "" {
			status["nominatedNodeName"] = nil
		} else {
			status["nominatedNodeName"] = nominating.node
		}
	}
	body, _ := json.Marshal(map[string]any{"status": status})
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		pctx, cancel := context.WithTimeout(ctx, s.cfg.BindTimeout)
		defer cancel()
		_, err := s.pods.Namespace(pod.Namespace).Patch(pctx, pod.Name, client.StrategicMergePatchType, body, "status")
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			s.log.Warn("could not update pod condition", "pod", queue.Key(pod), "err", err)
		}
	}()
}
