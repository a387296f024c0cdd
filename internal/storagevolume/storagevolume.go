package storagevolume

import (
	"errors"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/podplacement"
)

// The annotations of kube's binding protocol between the scheduler, the
// PersistentVolume controller and provisioners.
const (
	// AnnBindCompleted on a claim: the PV controller finished binding it.
	AnnBindCompleted = "pv.kubernetes.io/bind-completed"
	// AnnBoundByController on a claim or volume: the controller (or the
	// scheduler, pre-binding a volume) made the binding, not the user.
	AnnBoundByController = "pv.kubernetes.io/bound-by-controller"
	// AnnSelectedNode on a claim: the node the scheduler chose for the pod
	// using a WaitForFirstConsumer claim; the provisioner creates the
	// volume there, and removes the annotation to make the scheduler retry
	// when it cannot.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnStorageProvisioner (and its beta twin) on a claim: the
	// provisioner expected to provision it.
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	// AnnDynamicallyProvisioned on a volume: the provisioner that made it.
	AnnDynamicallyProvisioned = "pv.kubernetes.io/provisioned-by"
	// AnnBetaStorageClass is the class of claims and volumes written
	// before spec.storageClassName existed; it wins over the field.
	AnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class"
	// NotSupportedProvisioner is the provisioner of classes that never
	// provision (statically created local volumes).
	NotSupportedProvisioner = "kubernetes.io/no-provisioner"
)

// ClaimClass is the class a claim asks for ("" when none).
func ClaimClass(c *api.PersistentVolumeClaim) string {
	if class, ok := c.Annotations[AnnBetaStorageClass]; ok {
		return class
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// VolumeClass is the class of a volume ("" when none).
func VolumeClass(pv *api.PersistentVolume) string {
	if class, ok := pv.Annotations[AnnBetaStorageClass]; ok {
		return class
	}
	return pv.Spec.StorageClassName
}

// ClassGetter finds a StorageClass by name (a lister's Get: a NotFound
// StatusError when there is none).
type ClassGetter func(name string) (*api.StorageClass, error)

// IsDelayBindingMode reports whether the claim's class binds only when a
// pod using the claim is scheduled (WaitForFirstConsumer). A claim without
// a class, or whose class does not exist, binds immediately.
func IsDelayBindingMode(c *api.PersistentVolumeClaim, getClass ClassGetter) (bool, error) {
	name := ClaimClass(c)
	if name == "" {
		return false, nil
	}
	class, err := getClass(name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	if class.VolumeBindingMode == nil {
		return false, fmt.Errorf("VolumeBindingMode not set for StorageClass %q", name)
	}
	return *class.VolumeBindingMode == api.VolumeBindingWaitForFirstConsumer, nil
}

// IsDelayBindingProvisioning reports whether the scheduler chose a node
// for the claim's volume to be provisioned on.
func IsDelayBindingProvisioning(c *api.PersistentVolumeClaim) bool {
	_, ok := c.Annotations[AnnSelectedNode]
	return ok
}

// ErrNodeAffinityMismatch is CheckNodeAffinity's failure.
var ErrNodeAffinityMismatch = errors.New("no matching NodeSelectorTerms")

// CheckNodeAffinity reports (ErrNodeAffinityMismatch) a volume whose node
// affinity the node's labels do not satisfy. Only labels count, as in kube:
// a matchFields term on metadata.name matches no node.
func CheckNodeAffinity(pv *api.PersistentVolume, nodeLabels map[string]string) error {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	node := &api.Node{ObjectMeta: api.ObjectMeta{Labels: nodeLabels}}
	if !podplacement.MatchesNodeSelector(pv.Spec.NodeAffinity.Required, node) {
		return ErrNodeAffinityMismatch
	}
	return nil
}

// IsVolumeBoundToClaim reports whether the volume's claimRef names the
// claim (and its uid, when the claimRef carries one).
func IsVolumeBoundToClaim(pv *api.PersistentVolume, c *api.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Name != c.Name || ref.Namespace != c.Namespace {
		return false
	}
	return ref.UID == "" || ref.UID == c.UID
}

// ClaimRef is the reference to c a volume's spec.claimRef holds.
func ClaimRef(c *api.PersistentVolumeClaim) *api.ObjectReference {
	return &api.ObjectReference{
		Kind:            "PersistentVolumeClaim",
		APIVersion:      "v1",
		Namespace:       c.Namespace,
		Name:            c.Name,
		UID:             c.UID,
		ResourceVersion: c.ResourceVersion,
	}
}

// BindVolumeToClaim returns a copy of pv pre-bound to c (claimRef set,
// bound-by-controller annotated when the binding is new) and whether
// anything changed, as kube's GetBindVolumeToClaim.
func BindVolumeToClaim(pv *api.PersistentVolume, c *api.PersistentVolumeClaim) (*api.PersistentVolume, bool) {
	setByController := !IsVolumeBoundToClaim(pv, c)
	out := api.DeepCopy(pv)
	dirty := false
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != c.Name || ref.Namespace != c.Namespace || ref.UID != c.UID {
		out.Spec.ClaimRef = ClaimRef(c)
		dirty = true
	}
	if _, ok := out.Annotations[AnnBoundByController]; setByController && !ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnBoundByController] = "yes"
		dirty = true
	}
	return out, dirty
}

// VolumeModeMismatches reports whether claim and volume differ in
// volumeMode (Filesystem when unset).
func VolumeModeMismatches(c *api.PersistentVolumeClaimSpec, pv *api.PersistentVolumeSpec) bool {
	want, have := api.PersistentVolumeFilesystem, api.PersistentVolumeFilesystem
	if c.VolumeMode != nil {
		want = *c.VolumeMode
	}
	if pv.VolumeMode != nil {
		have = *pv.VolumeMode
	}
	return want != have
}

// AccessModesContained reports whether the volume offers every access
// mode the claim asks for.
func AccessModesContained(c *api.PersistentVolumeClaim, pv *api.PersistentVolume) bool {
	for _, m := range c.Spec.AccessModes {
		found := false
		for _, have := range pv.Spec.AccessModes {
			if have == m {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// FindMatchingVolume returns the volume for the claim among volumes, as
// kube's FindMatchingVolume: a volume already pre-bound to the claim wins
// (nil when its node affinity excludes node); otherwise the smallest
// Available volume, not being deleted, not in excluded, of the claim's
// class, size, volumeMode, selector, volumeAttributesClass, node affinity
// (when node is set) and access modes (when node is set). With
// delayBinding and no node, only pre-bound volumes are returned. nil
// means none fits.
func FindMatchingVolume(c *api.PersistentVolumeClaim, volumes []*api.PersistentVolume, node *api.Node, excluded map[string]bool, delayBinding bool) (*api.PersistentVolume, error) {
	requested := c.Spec.Resources.Requests[api.ResourceStorage]
	class := ClaimClass(c)
	var sel labels.Selector
	if c.Spec.Selector != nil {
		s, err := labels.SelectorFromLabelSelector(c.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("error creating internal label selector for claim: %s/%s: %w", c.Namespace, c.Name, err)
		}
		sel = s
	}
	claimVAC := deref(c.Spec.VolumeAttributesClassName)
	var best *api.PersistentVolume
	for _, pv := range volumes {
		if excluded[pv.Name] {
			continue
		}
		if pv.Spec.ClaimRef != nil && !IsVolumeBoundToClaim(pv, c) {
			continue
		}
		size := pv.Spec.Capacity[api.ResourceStorage]
		if size.Cmp(requested) < 0 {
			continue
		}
		if VolumeModeMismatches(&c.Spec, &pv.Spec) || claimVAC != deref(pv.Spec.VolumeAttributesClassName) {
			continue
		}
		if pv.DeletionTimestamp != nil {
			continue
		}
		affinityOK := node == nil || CheckNodeAffinity(pv, node.Labels) == nil
		if IsVolumeBoundToClaim(pv, c) {
			if !affinityOK {
				return nil, nil
			}
			return pv, nil
		}
		if node == nil && delayBinding {
			continue
		}
		if pv.Status.Phase != api.VolumeAvailable {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(pv.Labels)) {
			continue
		}
		if VolumeClass(pv) != class || !affinityOK {
			continue
		}
		if node != nil && !AccessModesContained(c, pv) {
			continue
		}
		if best == nil {
			best = pv
			continue
		}
		if bestSize := best.Spec.Capacity[api.ResourceStorage]; bestSize.Cmp(size) > 0 {
			best = pv
		}
	}
	return best, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
