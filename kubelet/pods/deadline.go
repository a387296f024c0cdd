package pods

import (
	"context"
	"time"

	"github.com/minik8s/minik8s/api"
)

// The status and event of a pod stopped at its activeDeadlineSeconds, as
// kube's kubelet (its active deadline handler) writes them.
const (
	deadlineExceededReason  = "DeadlineExceeded"
	deadlineExceededMessage = "Pod was active on the node longer than the specified deadline"
)

// activeDeadlineLeft is how long the pod may still be active on the node:
// spec.activeDeadlineSeconds from its start time; has is false without a
// deadline or a start.
func activeDeadlineLeft(pod *api.Pod, start *api.Time, now time.Time) (left time.Duration, has bool) {
	if pod.Spec.ActiveDeadlineSeconds == nil || start == nil || start.IsZero() {
		return 0, false
	}
	return time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second - now.Sub(start.Time), true
}

// enforceActiveDeadline stops a pod whose activeDeadlineSeconds passed, as
// kube's kubelet does: a Normal DeadlineExceeded event, its containers
// killed, and from then on the status Failed with reason DeadlineExceeded
// (report sets it). Before the deadline it asks to look again then. True
// when the pod must not run.
func (s *podSync) enforceActiveDeadline(ctx context.Context) bool {
	w, m, pod := s.w, s.m, s.pod
	if w.deadlineExceeded {
		return true
	}
	left, has := activeDeadlineLeft(pod, w.startTime, time.Now())
	if !has {
		return false
	}
	if left > 0 {
		s.after(left)
		return false
	}
	w.deadlineExceeded = true
	w.terminal = api.PodFailed
	s.log.Info("pod active longer than its activeDeadlineSeconds; stopping it", "activeDeadlineSeconds", *pod.Spec.ActiveDeadlineSeconds)
	m.rec.Event(pod, api.EventTypeNormal, deadlineExceededReason, deadlineExceededMessage)
	m.killPod(ctx, pod, s.cs, m.gracePeriod(pod))
	return true
}

// deadlineStatus marks a status Failed for the exceeded deadline, keeping
// what it says of the containers.
func deadlineStatus(st *api.PodStatus) {
	st.Phase = api.PodFailed
	st.Reason = deadlineExceededReason
	st.Message = deadlineExceededMessage
}
