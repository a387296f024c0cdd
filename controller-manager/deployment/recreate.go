package deployment

import (
	"context"

	"github.com/minik8s/minik8s/api"
)

// rolloutRecreate scales every old ReplicaSet to 0, waits until none of
// their pods run, then creates and scales up the new one.
func (dc *Controller) rolloutRecreate(ctx context.Context, d *api.Deployment, rsList []*api.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	allRSs := append(append([]*api.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown := false
	for i, rs := range oldRSs {
		if rsReplicas(rs) == 0 {
			continue
		}
		scaled, updated, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, 0, d)
		if err != nil {
			return err
		}
		if scaled {
			oldRSs[i] = updated
			scaledDown = true
		}
	}
	if scaledDown {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if dc.oldPodsRunning(newRS, oldRSs) {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if newRS == nil {
		if newRS, oldRSs, err = dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true); err != nil {
			return err
		}
		allRSs = append(append([]*api.ReplicaSet(nil), oldRSs...), newRS)
	}
	if _, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, newRS, dReplicas(d), d); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
}

// oldPodsRunning: old ReplicaSets still report pods, or a pod of theirs
// in the cache is not terminal.
func (dc *Controller) oldPodsRunning(newRS *api.ReplicaSet, oldRSs []*api.ReplicaSet) bool {
	if sumStatus(oldRSs, actualReplicas) > 0 {
		return true
	}
	for uid, pods := range dc.podMap(oldRSs) {
		if newRS != nil && newRS.UID == uid {
			continue
		}
		for _, p := range pods {
			if p.Status.Phase != api.PodFailed && p.Status.Phase != api.PodSucceeded {
				return true
			}
		}
	}
	return false
}
