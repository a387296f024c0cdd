package statefulset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/history"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
)

const (
	// DefaultRevisionHistoryLimit is kube's default.
	DefaultRevisionHistoryLimit = 10
	rollingUpdate               = "RollingUpdate"
	onDelete                    = "OnDelete"
)

func replicas(set *api.StatefulSet) int {
	if set.Spec.Replicas == nil {
		return 1
	}
	return int(*set.Spec.Replicas)
}

func startOrdinal(set *api.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

// revisions finds or creates the update revision (the current template)
// and the current one (status.currentRevision, else the update revision),
// as kube's getStatefulSetRevisions.
func (ssc *Controller) revisions(ctx context.Context, set *api.StatefulSet, revs []*api.ControllerRevision) (current, update *api.ControllerRevision, collisionCount int32, err error) {
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	ref := controller.NewControllerRef(&set.ObjectMeta, setKind.APIVersion, setKind.Kind)
	if update, err = ssc.history.Reconcile(ctx, &set.ObjectMeta, ref, &set.Spec.Template, revs, &collisionCount); err != nil {
		return nil, nil, collisionCount, err
	}
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			current = r
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// update is one pass of kube's defaultStatefulSetControl: it returns the
// status to write and the first error.
func (ssc *Controller) update(ctx context.Context, set *api.StatefulSet, revs []*api.ControllerRevision, pods []*api.Pod) (*api.StatefulSetStatus, error) {
	current, update, collisionCount, err := ssc.revisions(ctx, set, revs)
	if err != nil {
		return nil, err
	}
	currentTemplate, err := history.Template(current)
	if err != nil {
		return nil, err
	}
	status, err := ssc.updatePods(ctx, set, currentTemplate, current.Name, update.Name, pods)
	status.CollisionCount = &collisionCount
	status.CurrentRevision, status.UpdateRevision = current.Name, update.Name
	if status.CurrentRevision == "" {
		status.CurrentRevision = update.Name
	}
	// A finished rolling update makes the update revision current.
	if set.Spec.UpdateStrategy.Type != onDelete && status.UpdatedReplicas == status.Replicas && status.ReadyReplicas == status.Replicas {
		status.CurrentRevision = status.UpdateRevision
		status.CurrentReplicas = status.UpdatedReplicas
	}
	if err == nil {
		err = ssc.truncateHistory(ctx, set, pods, revs, status)
	}
	return status, err
}

// computeStatus counts pods as kube's computeReplicaStatus.
func computeStatus(set *api.StatefulSet, pods []*api.Pod, currentRev, updateRev string, now func() time.Time) api.StatefulSetStatus {
	st := api.StatefulSetStatus{Conditions: set.Status.Conditions}
	for _, p := range pods {
		if p == nil {
			continue
		}
		st.Replicas++
		if isRunningAndReady(p) && !isTerminating(p) {
			st.ReadyReplicas++
			if controller.IsPodAvailable(p, set.Spec.MinReadySeconds, now()) {
				st.AvailableReplicas++
			}
		}
		if !isTerminating(p) {
			if revisionOf(p) == currentRev {
				st.CurrentReplicas++
			}
			if revisionOf(p) == updateRev {
				st.UpdatedReplicas++
			}
		}
	}
	return st
}

// updatePods creates, replaces and deletes pods a step towards the spec.
func (ssc *Controller) updatePods(ctx context.Context, set *api.StatefulSet, currentTemplate *api.PodTemplateSpec, currentRev, updateRev string, pods []*api.Pod) (*api.StatefulSetStatus, error) {
	n, start := replicas(set), startOrdinal(set)
	parallel := set.Spec.PodManagementPolicy == api.ParallelPodManagement
	partition := 0
	var maxUnavailable = 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			partition = int(*ru.Partition)
		}
		if ru.MaxUnavailable != nil {
			v, err := controller.ScaledValueFromIntOrPercent(ru.MaxUnavailable, n, false)
			if err == nil {
				maxUnavailable = max(v, 1)
			}
		}
	}
	slots := make([]*api.Pod, n)
	var condemned []*api.Pod
	for _, p := range pods {
		_, ord := parentAndOrdinal(p)
		if ord >= start && ord < start+n {
			slots[ord-start] = p
		} else {
			condemned = append(condemned, p)
		}
	}
	sort.Slice(condemned, func(i, j int) bool {
		_, a := parentAndOrdinal(condemned[i])
		_, b := parentAndOrdinal(condemned[j])
		return a > b
	})
	all := append(append([]*api.Pod(nil), slots...), condemned...)
	result := func(err error) (*api.StatefulSetStatus, error) {
		st := computeStatus(set, all, currentRev, updateRev, ssc.now)
		return &st, err
	}
	// Failed or succeeded pods are deleted, to be re-created.
	for i, p := range slots {
		if p != nil && (isFailed(p) || isSucceeded(p)) && !isTerminating(p) {
			if err := ssc.deletePod(ctx, set, p); err != nil {
				return result(err)
			}
			slots[i], all[i] = nil, nil
		}
	}

	if parallel {
		if err := ssc.createParallel(ctx, set, slots, all, currentTemplate, currentRev, updateRev, partition); err != nil {
			return result(err)
		}
	}
	for i := range slots {
		ord := start + i
		p := slots[i]
		if p == nil {
			// OrderedReady: create the first missing pod and wait for it.
			pod := newVersionedPod(set, currentTemplate, currentRev, updateRev, partition, ord)
			if err := ssc.createPod(ctx, set, pod, ord); err != nil {
				return result(err)
			}
			slots[i], all[i] = pod, pod
			return result(nil)
		}
		if err := ssc.createMissingClaims(ctx, set, p, ord); err != nil {
			return result(err)
		}
		if !parallel && (isTerminating(p) || !isRunningAndReady(p)) {
			// Wait for this pod before its successors.
			return result(nil)
		}
		if !identityMatches(set, p, ord) {
			fixed := api.DeepCopy(p)
			setIdentity(set, fixed, ord)
			if _, err := client.Resource[api.Pod](ssc.client).Namespace(set.Namespace).Update(ctx, fixed); err != nil {
				return result(fmt.Errorf("update identity of pod %s: %w", p.Name, err))
			}
		}
	}

	// Scale down from the highest ordinal. OrderedReady deletes one pod at
	// a time and, as kube's processCondemned, only a Running, Ready and
	// available one — or the first unhealthy pod of the set (lowest
	// ordinal, kept pods first): an unhealthy condemned pod behind another
	// unhealthy one blocks the scale-down until the first recovers or goes.
	first := firstUnhealthy(slots, condemned)
	for _, p := range condemned {
		if isTerminating(p) {
			if !parallel {
				return result(nil)
			}
			continue
		}
		if !parallel && p != first {
			if !isRunningAndReady(p) {
				return result(nil)
			}
			if !controller.IsPodAvailable(p, set.Spec.MinReadySeconds, ssc.now()) {
				ssc.Queue.AddAfter(cache.MetaNamespaceKeyFunc(set), availableIn(p, set.Spec.MinReadySeconds, ssc.now()))
				return result(nil)
			}
		}
		if err := ssc.releaseClaimsToPod(ctx, set, p); err != nil {
			return result(err)
		}
		if err := ssc.deletePod(ctx, set, p); err != nil {
			return result(err)
		}
		markDeleted(all, p, ssc)
		if !parallel {
			return result(nil)
		}
	}

	if set.Spec.UpdateStrategy.Type == onDelete {
		return result(nil)
	}
	// Rolling update from the highest ordinal down to the partition, at
	// most maxUnavailable pods unavailable at once.
	unavailable := 0
	for i := partition; i < n; i++ {
		if p := slots[i]; p == nil || !isHealthy(p) {
			unavailable++
		}
	}
	for i := n - 1; i >= partition && i >= 0; i-- {
		p := slots[i]
		if p == nil || isTerminating(p) {
			continue
		}
		if revisionOf(p) != updateRev {
			if unavailable >= maxUnavailable && isHealthy(p) {
				break
			}
			if !isHealthy(p) || unavailable < maxUnavailable {
				if err := ssc.deletePod(ctx, set, p); err != nil {
					return result(err)
				}
				markDeleted(all, p, ssc)
				if isHealthy(p) {
					unavailable++
				}
			}
			continue
		}
		if !isHealthy(p) && maxUnavailable == 1 {
			// An updated pod not yet healthy holds the rollout.
			break
		}
	}
	return result(nil)
}

// firstUnhealthy is kube's firstUnhealthyPod: the lowest kept pod that is
// not healthy, else the lowest such condemned pod (condemned is sorted
// highest ordinal first); nil when all are healthy.
func firstUnhealthy(slots, condemned []*api.Pod) *api.Pod {
	for _, p := range slots {
		if p != nil && !isHealthy(p) {
			return p
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if !isHealthy(condemned[i]) {
			return condemned[i]
		}
	}
	return nil
}

// availableIn is how long until a ready pod has been ready minReadySeconds.
func availableIn(p *api.Pod, minReadySeconds int32, now time.Time) time.Duration {
	c := controller.PodReadyCondition(p)
	if c == nil {
		return time.Second
	}
	return max(c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).Sub(now), 0) + 100*time.Millisecond
}

// markDeleted shows p as terminating in the status of this pass.
func markDeleted(all []*api.Pod, p *api.Pod, ssc *Controller) {
	for i := range all {
		if all[i] == p {
			c := api.DeepCopy(p)
			now := api.NewTime(ssc.now())
			c.DeletionTimestamp = &now
			all[i] = c
		}
	}
}

// createPod creates the pod's claims, then the pod.
func (ssc *Controller) createPod(ctx context.Context, set *api.StatefulSet, pod *api.Pod, ordinal int) error {
	if err := ssc.createMissingClaims(ctx, set, pod, ordinal); err != nil {
		return err
	}
	_, err := client.Resource[api.Pod](ssc.client).Namespace(set.Namespace).Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		return err // the cache is behind: retry later
	}
	ssc.recordPodEvent(set, "create", pod.Name, err)
	return err
}

func (ssc *Controller) createMissingClaims(ctx context.Context, set *api.StatefulSet, pod *api.Pod, ordinal int) error {
	for _, c := range newClaims(set, ordinal) {
		if _, err := ssc.claims.Lister().Namespace(set.Namespace).Get(c.Name); err == nil {
			continue
		}
		_, err := client.Resource[api.PersistentVolumeClaim](ssc.client).Namespace(set.Namespace).Create(ctx, c)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			ssc.recorder.Eventf(set, api.EventTypeWarning, controller.FailedCreatePodReason,
				"create Claim %s for Pod %s in StatefulSet %s failed error: %s", c.Name, pod.Name, set.Name, err)
			return fmt.Errorf("create claim %s: %w", c.Name, err)
		}
		ssc.recorder.Eventf(set, api.EventTypeNormal, controller.SuccessfulCreatePodReason,
			"create Claim %s Pod %s in StatefulSet %s success", c.Name, pod.Name, set.Name)
	}
	return nil
}

func (ssc *Controller) deletePod(ctx context.Context, set *api.StatefulSet, pod *api.Pod) error {
	uid := pod.UID
	err := client.Resource[api.Pod](ssc.client).Namespace(set.Namespace).Delete(ctx, pod.Name, &api.DeleteOptions{Preconditions: &api.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	ssc.recordPodEvent(set, "delete", pod.Name, err)
	return err
}

// recordPodEvent words events as kube's StatefulPodControl.
func (ssc *Controller) recordPodEvent(set *api.StatefulSet, verb, pod string, err error) {
	if err == nil {
		reason := controller.SuccessfulCreatePodReason
		if verb == "delete" {
			reason = controller.SuccessfulDeletePodReason
		}
		ssc.recorder.Eventf(set, api.EventTypeNormal, reason, "%s Pod %s in StatefulSet %s successful", verb, pod, set.Name)
		return
	}
	reason := controller.FailedCreatePodReason
	if verb == "delete" {
		reason = controller.FailedDeletePodReason
	}
	ssc.recorder.Eventf(set, api.EventTypeWarning, reason, "%s Pod %s in StatefulSet %s failed error: %s", verb, pod, set.Name, err)
}

// truncateHistory deletes the oldest revisions no pod, nor the current or
// update revision, uses, beyond revisionHistoryLimit.
func (ssc *Controller) truncateHistory(ctx context.Context, set *api.StatefulSet, pods []*api.Pod, revs []*api.ControllerRevision, status *api.StatefulSetStatus) error {
	live := map[string]bool{status.CurrentRevision: true, status.UpdateRevision: true}
	for _, p := range pods {
		live[revisionOf(p)] = true
	}
	limit := DefaultRevisionHistoryLimit
	if set.Spec.RevisionHistoryLimit != nil {
		limit = int(*set.Spec.RevisionHistoryLimit)
	}
	return ssc.history.Truncate(ctx, revs, live, limit)
}

// releaseClaimsToPod makes a condemned pod an owner of its claims when
// persistentVolumeClaimRetentionPolicy.whenScaled is Delete, so the garbage
// collector deletes them after the pod, as kube does.
func (ssc *Controller) releaseClaimsToPod(ctx context.Context, set *api.StatefulSet, pod *api.Pod) error {
	p := set.Spec.PersistentVolumeClaimRetentionPolicy
	if p == nil || p.WhenScaled != "Delete" {
		return nil
	}
	_, ord := parentAndOrdinal(pod)
	f, t := false, true
	ref := api.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &f, BlockOwnerDeletion: &t}
	for i := range set.Spec.VolumeClaimTemplates {
		name := claimName(set, &set.Spec.VolumeClaimTemplates[i], ord)
		claim, err := ssc.claims.Lister().Namespace(set.Namespace).Get(name)
		if err != nil {
			continue // never made, or gone
		}
		if slices.ContainsFunc(claim.OwnerReferences, func(r api.OwnerReference) bool { return r.UID == pod.UID }) {
			continue
		}
		c := api.DeepCopy(claim)
		c.OwnerReferences = append(c.OwnerReferences, ref)
		if _, err := client.Resource[api.PersistentVolumeClaim](ssc.client).Namespace(set.Namespace).Update(ctx, c); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("update owners of claim %s: %w", name, err)
		}
	}
	return nil
}

// newVersionedPod is kube's newVersionedStatefulSetPod: pods below the
// partition keep the current revision; under OnDelete a re-created pod
// takes the update revision.
func newVersionedPod(set *api.StatefulSet, currentTemplate *api.PodTemplateSpec, currentRev, updateRev string, partition, ord int) *api.Pod {
	template, rev := &set.Spec.Template, updateRev
	if set.Spec.UpdateStrategy.Type != onDelete && ord-startOrdinal(set) < partition && currentRev != updateRev {
		template, rev = currentTemplate, currentRev
	}
	return newPod(set, template, rev, ord)
}

// createParallel creates every missing pod of a Parallel set in slow-start
// batches (1, 2, 4, ...), as kube, so a failing create is not repeated for
// every ordinal.
func (ssc *Controller) createParallel(ctx context.Context, set *api.StatefulSet, slots, all []*api.Pod, currentTemplate *api.PodTemplateSpec, currentRev, updateRev string, partition int) error {
	var missing []int
	for i, p := range slots {
		if p == nil {
			missing = append(missing, i)
		}
	}
	var mu sync.Mutex
	next := 0
	_, err := controller.SlowStartBatch(len(missing), 1, func() error {
		mu.Lock()
		i := missing[next]
		next++
		mu.Unlock()
		ord := startOrdinal(set) + i
		pod := newVersionedPod(set, currentTemplate, currentRev, updateRev, partition, ord)
		if err := ssc.createPod(ctx, set, pod, ord); err != nil {
			return err
		}
		mu.Lock()
		slots[i], all[i] = pod, pod
		mu.Unlock()
		return nil
	})
	return err
}
