package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

func (c *Controller) volumesClient() *client.ResourceClient[api.PersistentVolume, *api.PersistentVolume] {
	return client.Resource[api.PersistentVolume](c.client)
}

// syncVolume is kube's syncVolume: a volume's phase follows its claimRef
// and that claim; a volume whose claim is gone is Released and reclaimed.
func (c *Controller) syncVolume(ctx context.Context, volume *api.PersistentVolume) error {
	if volume.Spec.ClaimRef == nil || volume.Spec.ClaimRef.UID == "" {
		// Unused, or pre-bound by a user to a claim that will find it.
		_, err := c.updateVolumePhase(ctx, volume, api.VolumeAvailable, "")
		return err
	}
	claim, err := c.claimFor(ctx, volume)
	if err != nil {
		return err
	}
	switch {
	case claim == nil:
		// The claim was deleted: release the volume and reclaim it.
		if volume.Status.Phase != api.VolumeReleased && volume.Status.Phase != api.VolumeFailed {
			if volume, err = c.updateVolumePhase(ctx, volume, api.VolumeReleased, ""); err != nil {
				return err
			}
		}
		return c.reclaimVolume(ctx, volume)
	case claim.Spec.VolumeName == "":
		if storagevolume.VolumeModeMismatches(&claim.Spec, &volume.Spec) {
			c.events.Event(volume, api.EventTypeWarning, reasonVolumeMismatch,
				fmt.Sprintf("Cannot bind PersistentVolume to requested PersistentVolumeClaim %q due to incompatible volumeMode.", claim.Name))
			c.events.Event(claim, api.EventTypeWarning, reasonVolumeMismatch,
				fmt.Sprintf("Cannot bind PersistentVolume %q to requested PersistentVolumeClaim due to incompatible volumeMode.", volume.Name))
			return nil
		}
		// Half bound (by us, a provisioner or the scheduler): the claim's
		// sync finishes the binding.
		c.Add(key{name: storagevolume.ClaimKey(claim)})
		return nil
	case claim.Spec.VolumeName == volume.Name:
		_, err := c.updateVolumePhase(ctx, volume, api.VolumeBound, "")
		return err
	default:
		// The claim is bound to another volume.
		if _, ok := volume.Annotations[storagevolume.AnnDynamicallyProvisioned]; ok && volume.Spec.PersistentVolumeReclaimPolicy == api.PersistentVolumeReclaimDelete {
			// Provisioned for this claim, which took another volume:
			// nobody else should get it.
			if volume.Status.Phase != api.VolumeReleased && volume.Status.Phase != api.VolumeFailed {
				if volume, err = c.updateVolumePhase(ctx, volume, api.VolumeReleased, ""); err != nil {
					return err
				}
			}
			return c.reclaimVolume(ctx, volume)
		}
		return c.unbindVolume(ctx, volume)
	}
}

// updateVolumePhase writes the volume's phase and message (the apiserver
// stamps status.lastPhaseTransitionTime).
func (c *Controller) updateVolumePhase(ctx context.Context, volume *api.PersistentVolume, phase api.PersistentVolumePhase, message string) (*api.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	clone := api.DeepCopy(volume)
	clone.Status.Phase = phase
	clone.Status.Message = message
	updated, err := c.volumesClient().UpdateStatus(ctx, clone)
	if err != nil {
		return nil, fmt.Errorf("update volume %q phase to %s: %w", volume.Name, phase, err)
	}
	c.wroteVolume(updated)
	return updated, nil
}

func (c *Controller) updateVolumePhaseWithEvent(ctx context.Context, volume *api.PersistentVolume, phase api.PersistentVolumePhase,
	eventType, reason, message string) (*api.PersistentVolume, error) {
	if volume.Status.Phase == phase {
		return volume, nil
	}
	updated, err := c.updateVolumePhase(ctx, volume, phase, message)
	if err != nil {
		return nil, err
	}
	c.events.Event(updated, eventType, reason, message)
	return updated, nil
}

// unbindVolume frees a volume whose claim is bound elsewhere: the
// controller's own binding is dropped, a user's pre-binding keeps the
// claim's name without its uid.
func (c *Controller) unbindVolume(ctx context.Context, volume *api.PersistentVolume) error {
	clone := api.DeepCopy(volume)
	if _, ok := volume.Annotations[storagevolume.AnnBoundByController]; ok {
		clone.Spec.ClaimRef = nil
		delete(clone.Annotations, storagevolume.AnnBoundByController)
		if len(clone.Annotations) == 0 {
			clone.Annotations = nil
		}
	} else {
		clone.Spec.ClaimRef.UID = ""
	}
	updated, err := c.volumesClient().Update(ctx, clone)
	if err != nil {
		return fmt.Errorf("unbind volume %q: %w", volume.Name, err)
	}
	c.wroteVolume(updated)
	_, err = c.updateVolumePhase(ctx, updated, api.VolumeAvailable, "")
	return err
}

// reclaimVolume applies a Released volume's reclaim policy.
func (c *Controller) reclaimVolume(ctx context.Context, volume *api.PersistentVolume) error {
	switch volume.Spec.PersistentVolumeReclaimPolicy {
	case api.PersistentVolumeReclaimRetain:
		return nil
	case api.PersistentVolumeReclaimRecycle:
		return c.recycleVolume(ctx, volume)
	case api.PersistentVolumeReclaimDelete:
		return c.deleteVolume(ctx, volume)
	default:
		_, err := c.updateVolumePhaseWithEvent(ctx, volume, api.VolumeFailed, api.EventTypeWarning, "VolumeUnknownReclaimPolicy",
			"Volume has unrecognized PersistentVolumeReclaimPolicy")
		return err
	}
}

// recycleVolume refuses: kube recycles hostPath and NFS volumes with a
// scrubber pod (a deprecated feature, its image pulled from a registry);
// minik8s runs none, and other volumes have no recycler in kube either.
func (c *Controller) recycleVolume(ctx context.Context, volume *api.PersistentVolume) error {
	released, err := c.isVolumeReleased(volume)
	if err != nil || !released {
		return err
	}
	if used := c.podsUsing(volume); len(used) > 0 {
		c.events.Event(volume, api.EventTypeNormal, reasonVolumeFailedRecycle, "Volume is used by pods: "+strings.Join(used, ","))
		return nil
	}
	msg := "No recycler plugin found for the volume!"
	if volume.Spec.HostPath != nil || len(volume.Spec.NFS) > 0 {
		msg = "Recycle failed: minik8s runs no recycler pods (the Recycle reclaim policy is deprecated: use Delete or Retain)"
	}
	_, err = c.updateVolumePhaseWithEvent(ctx, volume, api.VolumeFailed, api.EventTypeWarning, reasonVolumeFailedRecycle, msg)
	return err
}

// tmpPath is the only hostPath kube's in-tree deleter removes.
var tmpPath = regexp.MustCompile("/tmp/.+")

// errExternal marks a volume whose deletion is an external provisioner's.
var errExternal = errors.New("deleted by an external provisioner")

// deleter is kube's findDeletablePlugin over the volume sources minik8s
// serves: a volume an external provisioner made (or a CSI volume) is left
// to it (errExternal); a hostPath under /tmp is deletable; anything else
// has no deleter, in kube's words.
func deleter(volume *api.PersistentVolume) error {
	if by := volume.Annotations[storagevolume.AnnDynamicallyProvisioned]; by != "" {
		if !strings.HasPrefix(by, "kubernetes.io/") {
			return errExternal
		}
		return fmt.Errorf("no volume plugin matched name: %s", by)
	}
	switch {
	case len(volume.Spec.CSI) > 0:
		return errExternal
	case volume.Spec.HostPath != nil:
		if !tmpPath.MatchString(volume.Spec.HostPath.Path) {
			return fmt.Errorf("host_path deleter only supports /tmp/.+ but received provided %s", volume.Spec.HostPath.Path)
		}
		return nil
	case len(volume.Spec.NFS) > 0, len(volume.Spec.FC) > 0, len(volume.Spec.ISCSI) > 0:
		return fmt.Errorf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", volume.Name)
	default:
		return fmt.Errorf("error getting deleter volume plugin for volume %q: no volume plugin matched", volume.Name)
	}
}

// deleteVolume is kube's deleteVolumeOperation for the deleters above.
func (c *Controller) deleteVolume(ctx context.Context, volume *api.PersistentVolume) error {
	switch err := deleter(volume); {
	case errors.Is(err, errExternal):
		return nil
	case err != nil:
		// Nobody can delete it: Failed, with kube's event. The deletion
		// is tried again at every sync, as kube does.
		_, err := c.updateVolumePhaseWithEvent(ctx, volume, api.VolumeFailed, api.EventTypeWarning, reasonVolumeFailedDelete, err.Error())
		return err
	}
	// Re-read: the volume may have been re-bound meanwhile.
	fresh, err := c.volumesClient().Get(ctx, volume.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if released, err := c.isVolumeReleased(fresh); err != nil || !released {
		return err
	}
	// kube's hostPath deleter removes the directory on the
	// controller-manager's own machine, meaningless on a cluster: the
	// directory is the node's, and only the object is deleted here.
	uid := fresh.UID
	err = c.volumesClient().Delete(ctx, fresh.Name, &api.DeleteOptions{Preconditions: &api.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete volume %q: %w", fresh.Name, err)
	}
	c.log.Info("deleted released volume", "pv", fresh.Name)
	return nil
}

// isVolumeReleased reports whether the volume's claim is gone (or bound
// elsewhere), so that it may be recycled or deleted.
func (c *Controller) isVolumeReleased(volume *api.PersistentVolume) (bool, error) {
	if volume.Spec.ClaimRef == nil || volume.Spec.ClaimRef.UID == "" {
		return false, nil
	}
	claim := c.claim(storagevolume.ClaimRefKey(volume.Spec.ClaimRef))
	if claim != nil && claim.UID == volume.Spec.ClaimRef.UID {
		return claim.Spec.VolumeName != "" && claim.Spec.VolumeName != volume.Name, nil
	}
	return true, nil
}

// podsUsing are the running pods (namespace/name) using the volume's claim.
func (c *Controller) podsUsing(volume *api.PersistentVolume) []string {
	if volume.Spec.ClaimRef == nil {
		return nil
	}
	var out []string
	for _, p := range controller.PodsUsingClaim(c.pods, storagevolume.ClaimRefKey(volume.Spec.ClaimRef)) {
		if !controller.IsPodTerminated(p) {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	return out
}
