package deployment

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
)

// syncStatusOnly only updates the status (a deployment being deleted).
func (dc *Controller) syncStatusOnly(ctx context.Context, d *api.Deployment, rsList []*api.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	return dc.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// sync handles scaling events and paused deployments: resize the
// ReplicaSets proportionally, without rolling anything.
func (dc *Controller) sync(ctx context.Context, d *api.Deployment, rsList []*api.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := dc.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// checkPausedConditions records pausing and resuming in the Progressing
// condition, so time spent paused never counts against the deadline.
func (dc *Controller) checkPausedConditions(ctx context.Context, d *api.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	c := getCondition(d.Status, api.DeploymentProgressing)
	if c != nil && c.Reason == api.TimedOutReason {
		return nil
	}
	pausedExists := c != nil && c.Reason == api.PausedDeployReason
	switch {
	case d.Spec.Paused && !pausedExists:
		setCondition(&d.Status, newCondition(api.DeploymentProgressing, api.ConditionUnknown, api.PausedDeployReason, "Deployment is paused", dc.now()))
	case !d.Spec.Paused && pausedExists:
		setCondition(&d.Status, newCondition(api.DeploymentProgressing, api.ConditionUnknown, api.ResumedDeployReason, "Deployment is resumed", dc.now()))
	default:
		return nil
	}
	return dc.updateStatus(ctx, d)
}

// isScalingEvent: an active ReplicaSet was sized for another
// spec.replicas than the deployment's now.
func (dc *Controller) isScalingEvent(ctx context.Context, d *api.Deployment, rsList []*api.ReplicaSet) (bool, error) {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range filterActive(append(oldRSs, newRS)) {
		desired, ok := intAnnotation(rs, api.DesiredReplicasAnnotation)
		if ok && desired != dReplicas(d) {
			return true, nil
		}
	}
	return false, nil
}

// getAllReplicaSetsAndSyncRevision returns the new ReplicaSet (created if
// asked and missing) and all old ones, with revisions synced.
func (dc *Controller) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *api.Deployment, rsList []*api.ReplicaSet, create bool) (*api.ReplicaSet, []*api.ReplicaSet, error) {
	oldRSs := findOldReplicaSets(d, rsList)
	newRS, err := dc.getNewReplicaSet(ctx, d, rsList, oldRSs, create)
	if err != nil {
		return nil, nil, err
	}
	return newRS, oldRSs, nil
}

// getNewReplicaSet finds the ReplicaSet of the current template, syncing
// its annotations and the deployment's revision, or creates it (named
// NAME-HASH, with the pod-template-hash label and selector).
func (dc *Controller) getNewReplicaSet(ctx context.Context, d *api.Deployment, rsList, oldRSs []*api.ReplicaSet, create bool) (*api.ReplicaSet, error) {
	existing := findNewReplicaSet(d, rsList)
	newRevision := strconv.FormatInt(maxRevision(oldRSs, dc.log)+1, 10)
	rsClient := client.Resource[api.ReplicaSet](dc.client).Namespace(d.Namespace)
	if existing != nil {
		rsCopy := api.DeepCopy(existing)
		annotationsUpdated := setNewReplicaSetAnnotations(d, rsCopy, newRevision, true)
		if annotationsUpdated || rsCopy.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rsCopy.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			return rsClient.Update(ctx, rsCopy)
		}
		needsUpdate := setDeploymentRevision(d, rsCopy.Annotations[api.RevisionAnnotation])
		if hasProgressDeadline(d) && getCondition(d.Status, api.DeploymentProgressing) == nil {
			setCondition(&d.Status, newCondition(api.DeploymentProgressing, api.ConditionTrue, api.FoundNewRSReason,
				fmt.Sprintf("Found new replica set %q", rsCopy.Name), dc.now()))
			needsUpdate = true
		}
		if needsUpdate {
			if err := dc.updateStatus(ctx, d); err != nil {
				return nil, err
			}
		}
		return rsCopy, nil
	}
	if !create {
		return nil, nil
	}

	template := *api.DeepCopy(&d.Spec.Template)
	hash := controller.ComputeHash(&template, d.Status.CollisionCount)
	template.Labels = cloneAndAdd(d.Spec.Template.Labels, api.DefaultDeploymentUniqueLabelKey, hash)
	selector := api.DeepCopy(d.Spec.Selector)
	selector.MatchLabels = cloneAndAdd(selector.MatchLabels, api.DefaultDeploymentUniqueLabelKey, hash)
	zero := int32(0)
	newRS := &api.ReplicaSet{
		TypeMeta: api.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: api.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []api.OwnerReference{controller.NewControllerRef(&d.ObjectMeta, deploymentAPIVersion, deploymentKind)},
			Labels:          template.Labels,
		},
		Spec: api.ReplicaSetSpec{Replicas: &zero, MinReadySeconds: d.Spec.MinReadySeconds, Selector: selector, Template: template},
	}
	n, err := newRSNewReplicas(d, append(oldRSs, newRS), newRS)
	if err != nil {
		return nil, err
	}
	newRS.Spec.Replicas = &n
	setNewReplicaSetAnnotations(d, newRS, newRevision, false)

	alreadyExists := false
	created, err := rsClient.Create(ctx, newRS)
	switch {
	case apierrors.IsAlreadyExists(err):
		// A slow cache, or a hash collision with a ReplicaSet not ours.
		alreadyExists = true
		rs, getErr := dc.rss.Lister().Namespace(d.Namespace).Get(newRS.Name)
		if getErr != nil {
			if rs, getErr = rsClient.Get(ctx, newRS.Name); getErr != nil {
				return nil, getErr
			}
		}
		if ref := api.GetControllerOf(&rs.ObjectMeta); ref != nil && ref.UID == d.UID && api.EqualIgnoreHash(&d.Spec.Template, &rs.Spec.Template) {
			created, err = rs, nil
			break
		}
		if d.Status.CollisionCount == nil {
			d.Status.CollisionCount = new(int32)
		}
		*d.Status.CollisionCount++
		if uerr := dc.updateStatus(ctx, d); uerr == nil {
			dc.log.Info("hash collision for deployment, bumping collisionCount", "deployment", d.Namespace+"/"+d.Name, "collisionCount", *d.Status.CollisionCount)
		}
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", newRS.Name, err)
		if hasProgressDeadline(d) && ctx.Err() == nil {
			setCondition(&d.Status, newCondition(api.DeploymentProgressing, api.ConditionFalse, api.FailedRSCreateReason, msg, dc.now()))
			_ = dc.updateStatus(ctx, d) // the create error is what we report
		}
		if ctx.Err() == nil {
			dc.recorder.Eventf(d, api.EventTypeWarning, api.FailedRSCreateReason, "%s", msg)
		}
		return nil, err
	}
	if !alreadyExists && n > 0 {
		dc.recorder.Eventf(d, api.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, n)
	}
	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExists && hasProgressDeadline(d) {
		setCondition(&d.Status, newCondition(api.DeploymentProgressing, api.ConditionTrue, api.NewReplicaSetReason,
			fmt.Sprintf("Created new replica set %q", created.Name), dc.now()))
		needsUpdate = true
	}
	if needsUpdate {
		err = dc.updateStatus(ctx, d)
	}
	return created, err
}

func cloneAndAdd(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}

// scale resizes the ReplicaSets for a changed spec.replicas: the only
// active one takes it all; a saturated new one makes the old go to 0;
// otherwise the change (within replicas+maxSurge) is spread over the
// active ReplicaSets in proportion to their size.
func (dc *Controller) scale(ctx context.Context, d *api.Deployment, newRS *api.ReplicaSet, oldRSs []*api.ReplicaSet) error {
	if one := findActiveOrLatest(newRS, oldRSs); one != nil {
		if rsReplicas(one) == dReplicas(d) {
			return nil
		}
		_, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, one, dReplicas(d), d)
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range filterActive(oldRSs) {
			if _, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, old, 0, d); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	all := filterActive(append(append([]*api.ReplicaSet(nil), oldRSs...), newRS))
	allReplicas := sumReplicas(all)
	allowed := int32(0)
	if dReplicas(d) > 0 {
		allowed = dReplicas(d) + MaxSurge(d)
	}
	toAdd := allowed - allReplicas
	op := ""
	switch {
	case toAdd > 0:
		sort.Sort(bySizeNewer(all))
		op = "up"
	case toAdd < 0:
		sort.Sort(bySizeOlder(all))
		op = "down"
	}
	added := int32(0)
	sizes := map[string]int32{}
	for _, rs := range all {
		if toAdd != 0 {
			p := getProportion(rs, d, toAdd, added)
			sizes[rs.Name] = rsReplicas(rs) + p
			added += p
		} else {
			sizes[rs.Name] = rsReplicas(rs)
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[rs.Name] = max(sizes[rs.Name]+toAdd-added, 0)
		}
		if _, _, err := dc.scaleReplicaSet(ctx, rs, sizes[rs.Name], d, op); err != nil {
			return err
		}
	}
	return nil
}

// findActiveOrLatest returns the only active ReplicaSet, or the newest one
// when none is active; nil when several are active.
func findActiveOrLatest(newRS *api.ReplicaSet, oldRSs []*api.ReplicaSet) *api.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	olds := append([]*api.ReplicaSet(nil), oldRSs...)
	sort.Sort(sort.Reverse(byCreationTimestamp(olds)))
	active := filterActive(append(olds, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return olds[0]
	case 1:
		return active[0]
	}
	return nil
}

func (dc *Controller) scaleReplicaSetAndRecordEvent(ctx context.Context, rs *api.ReplicaSet, size int32, d *api.Deployment) (bool, *api.ReplicaSet, error) {
	if rsReplicas(rs) == size {
		return false, rs, nil
	}
	op := "down"
	if rsReplicas(rs) < size {
		op = "up"
	}
	return dc.scaleReplicaSet(ctx, rs, size, d, op)
}

// scaleReplicaSet sets rs's replicas and its desired/max-replicas
// annotations, recording ScalingReplicaSet when the size changed.
func (dc *Controller) scaleReplicaSet(ctx context.Context, rs *api.ReplicaSet, size int32, d *api.Deployment, op string) (bool, *api.ReplicaSet, error) {
	sizeChanged := rsReplicas(rs) != size
	maxReplicas := dReplicas(d) + MaxSurge(d)
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, dReplicas(d), maxReplicas) {
		return false, rs, nil
	}
	old := rsReplicas(rs)
	rsCopy := api.DeepCopy(rs)
	rsCopy.Spec.Replicas = &size
	setReplicasAnnotations(rsCopy, dReplicas(d), maxReplicas)
	updated, err := client.Resource[api.ReplicaSet](dc.client).Namespace(rs.Namespace).Update(ctx, rsCopy)
	if err != nil {
		return false, rs, err
	}
	if sizeChanged {
		if op == "" {
			op = "down"
			if old < size {
				op = "up"
			}
		}
		dc.recorder.Eventf(d, api.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", op, updated.Name, old, size)
	}
	return sizeChanged, updated, nil
}

// cleanupDeployment deletes the oldest empty old ReplicaSets beyond
// revisionHistoryLimit.
func (dc *Controller) cleanupDeployment(ctx context.Context, oldRSs []*api.ReplicaSet, d *api.Deployment) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var cleanable []*api.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	sort.Sort(byRevision(cleanable))
	rsClient := client.Resource[api.ReplicaSet](dc.client).Namespace(d.Namespace)
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration || rs.DeletionTimestamp != nil {
			continue
		}
		dc.log.Debug("deleting old replica set", "replicaset", rs.Name, "deployment", d.Name)
		if err := rsClient.Delete(ctx, rs.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// syncDeploymentStatus writes the status computed from the ReplicaSets.
func (dc *Controller) syncDeploymentStatus(ctx context.Context, allRSs []*api.ReplicaSet, newRS *api.ReplicaSet, d *api.Deployment) error {
	st := dc.calculateStatus(allRSs, newRS, d)
	if reflect.DeepEqual(d.Status, st) {
		return nil
	}
	d.Status = st
	return dc.updateStatus(ctx, d)
}

// calculateStatus counts replicas and sets the Available condition.
func (dc *Controller) calculateStatus(allRSs []*api.ReplicaSet, newRS *api.ReplicaSet, d *api.Deployment) api.DeploymentStatus {
	available := sumStatus(allRSs, availableReplicas)
	unavailable := max(sumReplicas(allRSs)-available, 0)
	st := api.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            sumStatus(allRSs, actualReplicas),
		UpdatedReplicas:     sumStatus([]*api.ReplicaSet{newRS}, actualReplicas),
		ReadyReplicas:       sumStatus(allRSs, readyReplicas),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          append([]api.DeploymentCondition(nil), d.Status.Conditions...),
	}
	if available >= dReplicas(d)-MaxUnavailable(d) {
		setCondition(&st, newCondition(api.DeploymentAvailable, api.ConditionTrue, api.MinimumReplicasAvailable, "Deployment has minimum availability.", dc.now()))
	} else {
		setCondition(&st, newCondition(api.DeploymentAvailable, api.ConditionFalse, api.MinimumReplicasUnavailable, "Deployment does not have minimum availability.", dc.now()))
	}
	return st
}

// syncRolloutStatus is syncDeploymentStatus plus the Progressing
// condition, and a requeue at the progress deadline.
func (dc *Controller) syncRolloutStatus(ctx context.Context, allRSs []*api.ReplicaSet, newRS *api.ReplicaSet, d *api.Deployment) error {
	st := dc.calculateStatus(allRSs, newRS, d)
	if !hasProgressDeadline(d) {
		removeCondition(&st, api.DeploymentProgressing)
	}
	cur := getCondition(d.Status, api.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == api.NewRSAvailableReason
	if hasProgressDeadline(d) && !complete {
		switch {
		case deploymentComplete(d, &st):
			msg := fmt.Sprintf("Deployment %q has successfully progressed.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name)
			}
			setCondition(&st, newCondition(api.DeploymentProgressing, api.ConditionTrue, api.NewRSAvailableReason, msg, dc.now()))
		case deploymentProgressing(d, &st):
			msg := fmt.Sprintf("Deployment %q is progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
			}
			c := newCondition(api.DeploymentProgressing, api.ConditionTrue, api.ReplicaSetUpdatedReason, msg, dc.now())
			// Progress moves lastUpdateTime even with the same reason.
			if cur != nil {
				if cur.Status == api.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&st, api.DeploymentProgressing)
			}
			setCondition(&st, c)
		case deploymentTimedOut(d, &st, dc.now()):
			msg := fmt.Sprintf("Deployment %q has timed out progressing.", d.Name)
			if newRS != nil {
				msg = fmt.Sprintf("ReplicaSet %q has timed out progressing.", newRS.Name)
			}
			setCondition(&st, newCondition(api.DeploymentProgressing, api.ConditionFalse, api.TimedOutReason, msg, dc.now()))
		}
	}
	if failure := replicaFailure(allRSs, newRS); failure != nil {
		setCondition(&st, *failure)
	} else {
		removeCondition(&st, api.DeploymentReplicaFailure)
	}
	if reflect.DeepEqual(d.Status, st) {
		dc.requeueStuckDeployment(d, st)
		return nil
	}
	d.Status = st
	return dc.updateStatus(ctx, d)
}

// replicaFailure lifts the ReplicaFailure condition of the new (else any)
// ReplicaSet into the deployment.
func replicaFailure(allRSs []*api.ReplicaSet, newRS *api.ReplicaSet) *api.DeploymentCondition {
	conv := func(rs *api.ReplicaSet) *api.DeploymentCondition {
		for _, c := range rs.Status.Conditions {
			if c.Type == api.ReplicaSetReplicaFailure {
				return &api.DeploymentCondition{Type: api.DeploymentReplicaFailure, Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, LastUpdateTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
			}
		}
		return nil
	}
	if newRS != nil {
		if c := conv(newRS); c != nil {
			return c
		}
	}
	for _, rs := range allRSs {
		if rs != nil {
			if c := conv(rs); c != nil {
				return c
			}
		}
	}
	return nil
}

// requeueStuckDeployment schedules a check at the progress deadline of a
// rollout that shows no progress now.
func (dc *Controller) requeueStuckDeployment(d *api.Deployment, st api.DeploymentStatus) time.Duration {
	cur := getCondition(d.Status, api.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil {
		return -1
	}
	if deploymentComplete(d, &st) || cur.Reason == api.TimedOutReason {
		return -1
	}
	after := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(dc.now())
	if after < time.Second {
		dc.Queue.AddRateLimited(d.Namespace + "/" + d.Name)
		return 0
	}
	dc.enqueueAfter(d, after+time.Second)
	return after
}
