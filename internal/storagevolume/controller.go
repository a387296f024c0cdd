package storagevolume

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// What the PersistentVolume controller and the DefaultStorageClass
// admission plugin add to the shared binding rules.

// ClaimHasClass reports whether the claim names a class at all (an empty
// name counts: it asks for volumes without a class).
func ClaimHasClass(c *api.PersistentVolumeClaim) bool {
	_, ok := c.Annotations[AnnBetaStorageClass]
	return ok || c.Spec.StorageClassName != nil
}

// ClaimKey is the claim's namespace/name.
func ClaimKey(c *api.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

// ClaimRefKey is the namespace/name of the claim a claimRef names.
func ClaimRefKey(ref *api.ObjectReference) string { return ref.Namespace + "/" + ref.Name }

// Satisfies is nil when the volume may be bound to the claim that names it
// in spec.volumeName, else why not, in kube's words (checkVolumeSatisfyClaim;
// they end up in the claim's VolumeMismatch event).
func Satisfies(pv *api.PersistentVolume, c *api.PersistentVolumeClaim) error {
	if pv.DeletionTimestamp != nil {
		return fmt.Errorf("the volume is marked for deletion %q", pv.Name)
	}
	want := c.Spec.Resources.Requests[api.ResourceStorage]
	have := pv.Spec.Capacity[api.ResourceStorage]
	if have.Value() < want.Value() {
		return errors.New("requested PV is too small")
	}
	if VolumeClass(pv) != ClaimClass(c) {
		return errors.New("storageClassName does not match")
	}
	if deref(c.Spec.VolumeAttributesClassName) != deref(pv.Spec.VolumeAttributesClassName) {
		return errors.New("volumeAttributesClassName does not match")
	}
	if VolumeModeMismatches(&c.Spec, &pv.Spec) {
		return errors.New("incompatible volumeMode")
	}
	if !AccessModesContained(c, pv) {
		return errors.New("incompatible accessMode")
	}
	return nil
}

// accessModesKey is kube's access-mode index value ("RWO,ROX"), in kube's
// order, so that volumes with the same modes group together.
func accessModesKey(modes []api.PersistentVolumeAccessMode) (string, int) {
	var out []string
	for _, m := range []struct {
		mode  api.PersistentVolumeAccessMode
		short string
	}{{api.ReadWriteOnce, "RWO"}, {api.ReadOnlyMany, "ROX"}, {api.ReadWriteMany, "RWX"}, {api.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ","), len(out)
}

// FindBestMatch is the PV controller's choice of a volume for a claim
// (kube's findBestMatchForClaim over its access-mode index): volumes are
// grouped by their access-mode sets, the sets holding every mode the claim
// asks for are tried from the smallest, and the first that yields a match
// wins, so a claim for RWO gets an RWO volume before an RWO+RWX one.
func FindBestMatch(c *api.PersistentVolumeClaim, volumes []*api.PersistentVolume, delayBinding bool) (*api.PersistentVolume, error) {
	type group struct {
		key     string
		n       int
		volumes []*api.PersistentVolume
	}
	byKey := map[string]*group{}
	var groups []*group
	for _, pv := range volumes {
		k, n := accessModesKey(pv.Spec.AccessModes)
		g := byKey[k]
		if g == nil {
			if !AccessModesContained(c, pv) {
				continue
			}
			g = &group{key: k, n: n}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.volumes = append(g.volumes, pv)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].n != groups[j].n {
			return groups[i].n < groups[j].n
		}
		return groups[i].key < groups[j].key
	})
	for _, g := range groups {
		pv, err := FindMatchingVolume(c, g.volumes, nil, nil, delayBinding)
		if err != nil || pv != nil {
			return pv, err
		}
	}
	return nil, nil
}

// IsDefaultClass reports whether a class is marked default (either
// spelling of the annotation, value "true").
func IsDefaultClass(sc *api.StorageClass) bool {
	return sc.Annotations[api.IsDefaultStorageClassAnnotation] == "true" ||
		sc.Annotations[api.BetaIsDefaultStorageClassAnnotation] == "true"
}

// DefaultClass is the default class among classes: the newest marked
// default, by name when created in the same instant (kube's
// GetDefaultClass); nil when none is.
func DefaultClass(classes []*api.StorageClass) *api.StorageClass {
	var best *api.StorageClass
	for _, sc := range classes {
		if !IsDefaultClass(sc) {
			continue
		}
		if best == nil {
			best = sc
			continue
		}
		a, b := sc.CreationTimestamp.UnixNano(), best.CreationTimestamp.UnixNano()
		if a > b || (a == b && sc.Name < best.Name) {
			best = sc
		}
	}
	return best
}
