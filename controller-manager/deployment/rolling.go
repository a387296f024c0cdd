package deployment

import (
	"context"
	"fmt"
	"sort"

	"github.com/minik8s/minik8s/api"
)

// rolloutRolling scales the new ReplicaSet up within maxSurge, then the
// old ones down within maxUnavailable, one step per sync.
func (dc *Controller) rolloutRolling(ctx context.Context, d *api.Deployment, rsList []*api.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	allRSs := append(append([]*api.ReplicaSet(nil), oldRSs...), newRS)
	scaledUp, err := dc.reconcileNewReplicaSet(ctx, allRSs, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	scaledDown, err := dc.reconcileOldReplicaSets(ctx, allRSs, filterActive(oldRSs), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, allRSs, newRS, d)
}

func (dc *Controller) reconcileNewReplicaSet(ctx context.Context, allRSs []*api.ReplicaSet, newRS *api.ReplicaSet, d *api.Deployment) (bool, error) {
	if rsReplicas(newRS) == dReplicas(d) {
		return false, nil
	}
	if rsReplicas(newRS) > dReplicas(d) {
		scaled, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, newRS, dReplicas(d), d)
		return scaled, err
	}
	n, err := newRSNewReplicas(d, allRSs, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, newRS, n, d)
	return scaled, err
}

// reconcileOldReplicaSets scales old ReplicaSets down as far as
// availability allows: first their unhealthy replicas, then healthy ones.
func (dc *Controller) reconcileOldReplicaSets(ctx context.Context, allRSs, oldRSs []*api.ReplicaSet, newRS *api.ReplicaSet, d *api.Deployment) (bool, error) {
	if sumReplicas(oldRSs) == 0 {
		return false, nil
	}
	allPods := sumReplicas(allRSs)
	minAvailable := dReplicas(d) - MaxUnavailable(d)
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := allPods - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	oldRSs, cleaned, err := dc.cleanupUnhealthyReplicas(ctx, oldRSs, d, maxScaledDown)
	if err != nil {
		return false, nil
	}
	allRSs = append(append([]*api.ReplicaSet(nil), oldRSs...), newRS)
	scaledDown, err := dc.scaleDownOldReplicaSetsForRollingUpdate(ctx, allRSs, oldRSs, d)
	if err != nil {
		return false, nil
	}
	return cleaned+scaledDown > 0, nil
}

// cleanupUnhealthyReplicas scales old ReplicaSets down by their
// unavailable replicas (the ReplicaSet controller deletes those first), up
// to maxCleanup in total.
func (dc *Controller) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []*api.ReplicaSet, d *api.Deployment, maxCleanup int32) ([]*api.ReplicaSet, int32, error) {
	oldRSs = append([]*api.ReplicaSet(nil), oldRSs...)
	sort.Sort(byCreationTimestamp(oldRSs))
	total := int32(0)
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		if rsReplicas(rs) == 0 || rsReplicas(rs) == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxCleanup-total, rsReplicas(rs)-rs.Status.AvailableReplicas)
		size := rsReplicas(rs) - down
		if size > rsReplicas(rs) {
			return nil, 0, fmt.Errorf("when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d", rs.Namespace, rs.Name, rsReplicas(rs), size)
		}
		_, updated, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, size, d)
		if err != nil {
			return nil, total, err
		}
		total += down
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownOldReplicaSetsForRollingUpdate scales old ReplicaSets down, the
// oldest first, by the available pods above minAvailable.
func (dc *Controller) scaleDownOldReplicaSetsForRollingUpdate(ctx context.Context, allRSs, oldRSs []*api.ReplicaSet, d *api.Deployment) (int32, error) {
	minAvailable := dReplicas(d) - MaxUnavailable(d)
	available := sumStatus(allRSs, availableReplicas)
	if available <= minAvailable {
		return 0, nil
	}
	oldRSs = append([]*api.ReplicaSet(nil), oldRSs...)
	sort.Sort(byCreationTimestamp(oldRSs))
	total, target := int32(0), available-minAvailable
	for _, rs := range oldRSs {
		if total >= target {
			break
		}
		if rsReplicas(rs) == 0 {
			continue
		}
		down := min(rsReplicas(rs), target-total)
		if _, _, err := dc.scaleReplicaSetAndRecordEvent(ctx, rs, rsReplicas(rs)-down, d); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}
