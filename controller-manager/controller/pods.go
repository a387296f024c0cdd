package controller

import (
	"time"

	"github.com/minik8s/minik8s/api"
)

// PodKey is the namespace/name key of a pod, the key expectations track.
func PodKey(pod *api.Pod) string { return pod.Namespace + "/" + pod.Name }

// PodReadyCondition returns the pod's Ready condition, or nil.
func PodReadyCondition(pod *api.Pod) *api.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == api.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// IsPodReady reports whether the pod's Ready condition is True.
func IsPodReady(pod *api.Pod) bool {
	c := PodReadyCondition(pod)
	return c != nil && c.Status == api.ConditionTrue
}

// IsPodAvailable reports whether the pod has been ready for at least
// minReadySeconds at now (kube's podutil.IsPodAvailable).
func IsPodAvailable(pod *api.Pod, minReadySeconds int32, now time.Time) bool {
	c := PodReadyCondition(pod)
	if c == nil || c.Status != api.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(d).Before(now)
}

// IsPodActive reports whether the pod counts towards a controller's
// replicas: not terminal and not being deleted.
func IsPodActive(pod *api.Pod) bool {
	return pod.Status.Phase != api.PodSucceeded && pod.Status.Phase != api.PodFailed &&
		pod.DeletionTimestamp == nil
}

// FilterActivePods returns the active pods of pods.
func FilterActivePods(pods []*api.Pod) []*api.Pod {
	var out []*api.Pod
	for _, p := range pods {
		if IsPodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

var podPhaseOrdinal = map[api.PodPhase]int{api.PodPending: 0, api.PodUnknown: 1, api.PodRunning: 2}

// PodsByDeletionPreference sorts pods so that the ones a controller should
// delete first come first, as kube's ActivePodsWithRanks: unassigned before
// assigned; Pending before Unknown before Running; not ready before ready;
// higher rank (more pods of the same owner family on its node) first; ready
// for less time first; more container restarts first; newer first.
type PodsByDeletionPreference struct {
	Pods []*api.Pod
	// Rank, parallel to Pods, is optional.
	Rank []int
}

func (s PodsByDeletionPreference) Len() int { return len(s.Pods) }
func (s PodsByDeletionPreference) Swap(i, j int) {
	s.Pods[i], s.Pods[j] = s.Pods[j], s.Pods[i]
	if s.Rank != nil {
		s.Rank[i], s.Rank[j] = s.Rank[j], s.Rank[i]
	}
}

func (s PodsByDeletionPreference) Less(i, j int) bool {
	a, b := s.Pods[i], s.Pods[j]
	if a.Spec.NodeName != b.Spec.NodeName && (a.Spec.NodeName == "" || b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if oa, ob := podPhaseOrdinal[a.Status.Phase], podPhaseOrdinal[b.Status.Phase]; oa != ob {
		return oa < ob
	}
	ra, rb := IsPodReady(a), IsPodReady(b)
	if ra != rb {
		return !ra
	}
	if s.Rank != nil && s.Rank[i] != s.Rank[j] {
		return s.Rank[i] > s.Rank[j]
	}
	if ra && rb {
		ta, tb := PodReadyCondition(a).LastTransitionTime.Time, PodReadyCondition(b).LastTransitionTime.Time
		if !ta.Equal(tb) {
			return afterOrZero(ta, tb)
		}
	}
	if ca, cb := maxRestarts(a), maxRestarts(b); ca != cb {
		return ca > cb
	}
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return afterOrZero(ta, tb)
	}
	return a.Name > b.Name // deterministic: generateName suffixes are random anyway
}

// afterOrZero: a zero time sorts first, then later times.
func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

func maxRestarts(pod *api.Pod) int32 {
	var n int32
	for _, c := range pod.Status.ContainerStatuses {
		n = max(n, c.RestartCount)
	}
	return n
}
