package persistentvolume

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// Event reasons of kube's pkg/controller/volume/events.
const (
	reasonFailedBinding        = "FailedBinding"
	reasonVolumeMismatch       = "VolumeMismatch"
	reasonVolumeFailedRecycle  = "VolumeFailedRecycle"
	reasonVolumeFailedDelete   = "VolumeFailedDelete"
	reasonExternalProvisioning = "ExternalProvisioning"
	reasonProvisioningFailed   = "ProvisioningFailed"
	reasonWaitForFirstConsumer = "WaitForFirstConsumer"
	reasonWaitForPodScheduled  = "WaitForPodScheduled"
)

func (c *Controller) claimsClient(ns string) *client.ResourceClient[api.PersistentVolumeClaim, *api.PersistentVolumeClaim] {
	return client.Resource[api.PersistentVolumeClaim](c.client).Namespace(ns)
}

func (c *Controller) class(name string) (*api.StorageClass, error) {
	return c.classes.Lister().Get(name)
}

// syncClaim is kube's syncClaim: a claim not yet fully bound is bound, a
// bound one is checked against its volume.
func (c *Controller) syncClaim(ctx context.Context, claim *api.PersistentVolumeClaim) error {
	if _, ok := claim.Annotations[storagevolume.AnnBindCompleted]; !ok {
		return c.syncUnboundClaim(ctx, claim)
	}
	return c.syncBoundClaim(ctx, claim)
}

func (c *Controller) syncUnboundClaim(ctx context.Context, claim *api.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		delayBinding, err := storagevolume.IsDelayBindingMode(claim, c.class)
		if err != nil {
			return err
		}
		volume, err := storagevolume.FindBestMatch(claim, c.allVolumes(), delayBinding)
		if err != nil {
			return fmt.Errorf("error finding PV for claim %q: %w", storagevolume.ClaimKey(claim), err)
		}
		if volume != nil {
			return c.bind(ctx, volume, claim)
		}
		// No volume: a claim without a class gets the default one first
		// (the retroactive assignment), and is synced again.
		if updated, err := c.assignDefaultStorageClass(ctx, claim); err != nil {
			return fmt.Errorf("can't update PersistentVolumeClaim[%q]: %w", storagevolume.ClaimKey(claim), err)
		} else if updated {
			return nil
		}
		switch {
		case delayBinding && !storagevolume.IsDelayBindingProvisioning(claim):
			c.eventForUnboundDelayBindingClaim(claim)
		case storagevolume.ClaimClass(claim) != "":
			// Provisioning is the provisioner's: the claim stays as it is.
			return c.provisionClaim(ctx, claim)
		default:
			c.events.Event(claim, api.EventTypeNormal, reasonFailedBinding, "no persistent volumes available for this claim and no storage class is set")
		}
		_, err = c.updateClaimStatus(ctx, claim, api.ClaimPending, nil)
		return err
	}

	// The user asked for a volume by name.
	volume := c.volume(claim.Spec.VolumeName)
	switch {
	case volume == nil:
		// It may come later (pre-provisioned, or created by hand).
		_, err := c.updateClaimStatus(ctx, claim, api.ClaimPending, nil)
		return err
	case volume.Spec.ClaimRef == nil:
		if err := storagevolume.Satisfies(volume, claim); err != nil {
			c.events.Event(claim, api.EventTypeWarning, reasonVolumeMismatch, fmt.Sprintf("Cannot bind to requested volume %q: %s", volume.Name, err))
			_, err := c.updateClaimStatus(ctx, claim, api.ClaimPending, nil)
			return err
		}
		return c.bind(ctx, volume, claim)
	case storagevolume.IsVolumeBoundToClaim(volume, claim):
		// Pre-bound both ways (or half bound by us): finish it.
		return c.bind(ctx, volume, claim)
	default:
		c.events.Event(claim, api.EventTypeWarning, reasonFailedBinding, fmt.Sprintf("volume %q already bound to a different claim.", volume.Name))
		if _, ok := claim.Annotations[storagevolume.AnnBoundByController]; ok {
			// We set spec.volumeName and lost the race for the volume:
			// a bug kube reports and retries.
			return fmt.Errorf("invalid binding of claim %q to volume %q: volume already claimed by %q",
				storagevolume.ClaimKey(claim), claim.Spec.VolumeName, storagevolume.ClaimRefKey(volume.Spec.ClaimRef))
		}
		_, err := c.updateClaimStatus(ctx, claim, api.ClaimPending, nil)
		return err
	}
}

func (c *Controller) syncBoundClaim(ctx context.Context, claim *api.PersistentVolumeClaim) error {
	if claim.Spec.VolumeName == "" {
		_, err := c.updateClaimStatusWithEvent(ctx, claim, api.ClaimLost, nil, api.EventTypeWarning, "ClaimLost",
			"Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
		return err
	}
	volume := c.volume(claim.Spec.VolumeName)
	switch {
	case volume == nil:
		_, err := c.updateClaimStatusWithEvent(ctx, claim, api.ClaimLost, nil, api.EventTypeWarning, "ClaimLost",
			"Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		return err
	case volume.Spec.ClaimRef == nil, volume.Spec.ClaimRef.UID == claim.UID:
		// Rebind a volume that lost its claimRef (restored from a backup),
		// or make sure both are marked bound.
		return c.bind(ctx, volume, claim)
	default:
		_, err := c.updateClaimStatusWithEvent(ctx, claim, api.ClaimLost, nil, api.EventTypeWarning, "ClaimMisbound",
			"Two claims are bound to the same volume, this one is bound incorrectly")
		return err
	}
}

// eventForUnboundDelayBindingClaim tells a WaitForFirstConsumer claim's
// owner why it is not bound yet.
func (c *Controller) eventForUnboundDelayBindingClaim(claim *api.PersistentVolumeClaim) {
	reason, message := reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding"
	var names []string
	for _, p := range controller.PodsUsingClaim(c.pods, storagevolume.ClaimKey(claim)) {
		if !controller.IsPodTerminated(p) && p.Spec.NodeName == "" {
			names = append(names, p.Name)
		}
	}
	switch {
	case len(names) == 1:
		reason, message = reasonWaitForPodScheduled, fmt.Sprintf("waiting for pod %s to be scheduled", names[0])
	case len(names) > 1:
		reason, message = reasonWaitForPodScheduled, fmt.Sprintf("waiting for pods %s to be scheduled", strings.Join(names, ","))
	}
	c.events.Event(claim, api.EventTypeNormal, reason, message)
}

// assignDefaultStorageClass gives a claim without a class the default
// class, when there is one (kube's retroactive default class assignment).
func (c *Controller) assignDefaultStorageClass(ctx context.Context, claim *api.PersistentVolumeClaim) (bool, error) {
	if storagevolume.ClaimHasClass(claim) {
		return false, nil
	}
	def := storagevolume.DefaultClass(c.classes.Lister().List(nil))
	if def == nil {
		return false, nil
	}
	clone := api.DeepCopy(claim)
	name := def.Name
	clone.Spec.StorageClassName = &name
	updated, err := c.claimsClient(claim.Namespace).Update(ctx, clone)
	if err != nil {
		return false, err
	}
	c.wroteClaim(updated)
	c.log.Info("assigned the default storage class to a claim", "pvc", storagevolume.ClaimKey(claim), "storageClass", name)
	return true, nil
}

// provisionClaim hands the claim to its class's provisioner. minik8s has
// no in-tree provisioner: every provisioner is external (kube's
// provisionClaimOperationExternal), except kube's own kubernetes.io/
// names, which kube would run in-tree: they fail as kube's do when the
// plugin is missing.
func (c *Controller) provisionClaim(ctx context.Context, claim *api.PersistentVolumeClaim) error {
	name := storagevolume.ClaimClass(claim)
	class, err := c.class(name)
	if err != nil {
		msg := err.Error()
		if apierrors.IsNotFound(err) {
			// client-go's lister error, singular resource and all.
			msg = fmt.Sprintf("storageclass.storage.k8s.io %q not found", name)
		}
		c.events.Event(claim, api.EventTypeWarning, reasonProvisioningFailed, msg)
		return nil
	}
	provisioner := class.Provisioner
	if strings.HasPrefix(provisioner, "kubernetes.io/") {
		// kube's in-tree plugins (and kubernetes.io/no-provisioner, the
		// class of static volumes) provision nothing here.
		c.events.Event(claim, api.EventTypeWarning, reasonProvisioningFailed, "no volume plugin matched name: "+provisioner)
		return nil
	}
	if claim.Annotations[storagevolume.AnnStorageProvisioner] != provisioner || claim.Annotations[storagevolume.AnnBetaStorageProvisioner] != provisioner {
		clone := api.DeepCopy(claim)
		if clone.Annotations == nil {
			clone.Annotations = map[string]string{}
		}
		clone.Annotations[storagevolume.AnnBetaStorageProvisioner] = provisioner
		clone.Annotations[storagevolume.AnnStorageProvisioner] = provisioner
		updated, err := c.claimsClient(claim.Namespace).Update(ctx, clone)
		if err != nil {
			c.events.Event(claim, api.EventTypeWarning, reasonProvisioningFailed, fmt.Sprintf("Error saving claim: %v", err))
			return err
		}
		c.wroteClaim(updated)
		claim = updated
	}
	c.events.Event(claim, api.EventTypeNormal, reasonExternalProvisioning, fmt.Sprintf("Waiting for a volume to be created either by "+
		"the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that "+
		"the provisioner is running and correctly registered.", provisioner))
	return nil
}

// updateClaimStatus sets the claim's phase and, bound, the volume's
// access modes and capacity (cleared without a volume).
func (c *Controller) updateClaimStatus(ctx context.Context, claim *api.PersistentVolumeClaim, phase api.PersistentVolumeClaimPhase,
	volume *api.PersistentVolume) (*api.PersistentVolumeClaim, error) {
	clone := api.DeepCopy(claim)
	dirty := false
	if claim.Status.Phase != phase {
		clone.Status.Phase = phase
		dirty = true
	}
	if volume == nil {
		if claim.Status.AccessModes != nil || claim.Status.Capacity != nil || claim.Status.CurrentVolumeAttributesClassName != nil {
			clone.Status.AccessModes, clone.Status.Capacity, clone.Status.CurrentVolumeAttributesClassName = nil, nil, nil
			dirty = true
		}
	} else {
		if !reflect.DeepEqual(claim.Status.AccessModes, volume.Spec.AccessModes) {
			clone.Status.AccessModes = volume.Spec.AccessModes
			dirty = true
		}
		if claim.Status.Phase != phase {
			have, ok := volume.Spec.Capacity[api.ResourceStorage]
			if !ok {
				return nil, fmt.Errorf("PersistentVolume %q is without a storage capacity", volume.Name)
			}
			if cur, ok := claim.Status.Capacity[api.ResourceStorage]; !ok || have.Cmp(cur) != 0 {
				clone.Status.Capacity = volume.Spec.Capacity
				dirty = true
			}
			if claim.Status.Phase == api.ClaimPending && phase == api.ClaimBound &&
				!reflect.DeepEqual(claim.Status.CurrentVolumeAttributesClassName, volume.Spec.VolumeAttributesClassName) {
				clone.Status.CurrentVolumeAttributesClassName = volume.Spec.VolumeAttributesClassName
			}
		}
	}
	if !dirty {
		return claim, nil
	}
	updated, err := c.claimsClient(claim.Namespace).UpdateStatus(ctx, clone)
	if err != nil {
		return nil, err
	}
	c.wroteClaim(updated)
	return updated, nil
}

func (c *Controller) updateClaimStatusWithEvent(ctx context.Context, claim *api.PersistentVolumeClaim, phase api.PersistentVolumeClaimPhase,
	volume *api.PersistentVolume, eventType, reason, message string) (*api.PersistentVolumeClaim, error) {
	if claim.Status.Phase == phase {
		return claim, nil
	}
	updated, err := c.updateClaimStatus(ctx, claim, phase, volume)
	if err != nil {
		return nil, err
	}
	c.events.Event(updated, eventType, reason, message)
	return updated, nil
}

// bind binds volume and claim, in kube's order (the volume's claimRef,
// its phase, the claim's volumeName and annotations, its phase), each
// step a no-op when done, so that a bind interrupted halfway finishes at
// the next sync.
func (c *Controller) bind(ctx context.Context, volume *api.PersistentVolume, claim *api.PersistentVolumeClaim) error {
	volumes := client.Resource[api.PersistentVolume](c.client)
	if clone, dirty := storagevolume.BindVolumeToClaim(volume, claim); dirty {
		updated, err := volumes.Update(ctx, clone)
		if err != nil {
			return fmt.Errorf("bind volume %q to claim %q: %w", volume.Name, storagevolume.ClaimKey(claim), err)
		}
		c.wroteVolume(updated)
		volume = updated
	}
	volume, err := c.updateVolumePhase(ctx, volume, api.VolumeBound, "")
	if err != nil {
		return err
	}
	clone := api.DeepCopy(claim)
	dirty := false
	if claim.Spec.VolumeName != volume.Name {
		clone.Spec.VolumeName = volume.Name
		setAnnotation(&clone.ObjectMeta, storagevolume.AnnBoundByController)
		dirty = true
	}
	if _, ok := clone.Annotations[storagevolume.AnnBindCompleted]; !ok {
		setAnnotation(&clone.ObjectMeta, storagevolume.AnnBindCompleted)
		dirty = true
	}
	if dirty {
		updated, err := c.claimsClient(claim.Namespace).Update(ctx, clone)
		if err != nil {
			return fmt.Errorf("bind claim %q to volume %q: %w", storagevolume.ClaimKey(claim), volume.Name, err)
		}
		c.wroteClaim(updated)
		claim = updated
	}
	if _, err := c.updateClaimStatus(ctx, claim, api.ClaimBound, volume); err != nil {
		return err
	}
	c.log.Info("bound claim to volume", "pvc", storagevolume.ClaimKey(claim), "pv", volume.Name)
	return nil
}

// setAnnotation sets annotation name to "yes" unless it is set.
func setAnnotation(meta *api.ObjectMeta, name string) {
	if _, ok := meta.Annotations[name]; ok {
		return
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[name] = "yes"
}

// claimFor finds the claim a volume's claimRef names: the cache, else the
// apiserver (the cache may not have seen a claim just created); nil when
// there is none with the claimRef's uid.
func (c *Controller) claimFor(ctx context.Context, volume *api.PersistentVolume) (*api.PersistentVolumeClaim, error) {
	ref := volume.Spec.ClaimRef
	claim := c.claim(storagevolume.ClaimRefKey(ref))
	if claim == nil && volume.Status.Phase != api.VolumeReleased && volume.Status.Phase != api.VolumeFailed {
		live, err := c.claimsClient(ref.Namespace).Get(ctx, ref.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			claim = live
		}
	}
	if claim != nil && claim.UID != ref.UID {
		// The cache may hold an older claim of the same name: ask.
		live, err := c.claimsClient(ref.Namespace).Get(ctx, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			claim = nil
		case err != nil:
			return nil, err
		case live.UID != ref.UID:
			claim = nil
		default:
			claim = live
		}
	}
	return claim, nil
}
