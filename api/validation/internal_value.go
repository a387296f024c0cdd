package validation

import (
	"encoding/json"

	"github.com/minik8s/minik8s/api"
)

// kube-apiserver validates its internal types, which have no JSON tags: a
// composite bad value it prints is JSON with Go's field names, but for the
// metav1 parts (ObjectMeta, LabelSelector, Time), which keep theirs. The
// types below are those internal shapes (pkg/apis/core, v1.37), field for
// field and in order, for the values whose messages must read the same.

// internalClaims prints StatefulSet volumeClaimTemplates as kube's
// []core.PersistentVolumeClaim: its (empty) TypeMeta left out, its
// metadata inlined, Spec and Status with Go's field names.
func internalClaims(claims []api.PersistentVolumeClaim) rawText {
	if claims == nil {
		return rawText("null")
	}
	out := []byte{'['}
	for i := range claims {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, internalClaim(&claims[i])...)
	}
	return rawText(append(out, ']'))
}

func internalClaim(c *api.PersistentVolumeClaim) []byte {
	meta, err := json.Marshal(c.ObjectMeta)
	if err != nil {
		return []byte("null")
	}
	rest, err := json.Marshal(struct {
		Spec   internalClaimSpec
		Status internalClaimStatus
	}{newInternalClaimSpec(&c.Spec), newInternalClaimStatus(&c.Status)})
	if err != nil {
		return []byte("null")
	}
	// {META} and {"Spec":...,"Status":...} as one object.
	if len(meta) > 2 {
		return append(append(meta[:len(meta)-1:len(meta)-1], ','), rest[1:]...)
	}
	return rest
}

type internalResources struct{ Limits, Requests api.ResourceList }

type internalClaimSpec struct {
	AccessModes               []api.PersistentVolumeAccessMode
	Selector                  *api.LabelSelector
	Resources                 internalResources
	VolumeName                string
	StorageClassName          *string
	VolumeMode                *api.PersistentVolumeMode
	DataSource                *internalLocalRef
	DataSourceRef             *internalRef
	VolumeAttributesClassName *string
}

type internalLocalRef struct {
	APIGroup   *string
	Kind, Name string
}

type internalRef struct {
	APIGroup   *string
	Kind, Name string
	Namespace  *string
}

func newInternalClaimSpec(s *api.PersistentVolumeClaimSpec) internalClaimSpec {
	out := internalClaimSpec{AccessModes: s.AccessModes, Selector: s.Selector,
		Resources:  internalResources{s.Resources.Limits, s.Resources.Requests},
		VolumeName: s.VolumeName, StorageClassName: s.StorageClassName, VolumeMode: s.VolumeMode,
		VolumeAttributesClassName: s.VolumeAttributesClassName}
	if r := s.DataSource; r != nil {
		out.DataSource = &internalLocalRef{r.APIGroup, r.Kind, r.Name}
	}
	if r := s.DataSourceRef; r != nil {
		out.DataSourceRef = &internalRef{r.APIGroup, r.Kind, r.Name, r.Namespace}
	}
	return out
}

type internalClaimStatus struct {
	Phase                            api.PersistentVolumeClaimPhase
	AccessModes                      []api.PersistentVolumeAccessMode
	Capacity                         api.ResourceList
	Conditions                       []internalClaimCondition
	AllocatedResources               api.ResourceList
	AllocatedResourceStatuses        map[api.ResourceName]string
	CurrentVolumeAttributesClassName *string
	ModifyVolumeStatus               *internalModifyVolumeStatus
	HealthStatus                     *internalHealthStatus
}

type internalClaimCondition struct {
	Type, Status                      string
	LastProbeTime, LastTransitionTime api.Time
	Reason, Message                   string
}

type internalModifyVolumeStatus struct{ TargetVolumeAttributesClassName, Status string }

type internalHealthStatus struct {
	HealthConditions   []struct{ Status, Reason, Message string }
	LastTransitionTime api.Time
}

func newInternalClaimStatus(s *api.PersistentVolumeClaimStatus) internalClaimStatus {
	out := internalClaimStatus{Phase: s.Phase, AccessModes: s.AccessModes, Capacity: s.Capacity,
		AllocatedResources: s.AllocatedResources, AllocatedResourceStatuses: s.AllocatedResourceStatuses,
		CurrentVolumeAttributesClassName: s.CurrentVolumeAttributesClassName}
	for _, c := range s.Conditions {
		out.Conditions = append(out.Conditions, internalClaimCondition{c.Type, string(c.Status), c.LastProbeTime, c.LastTransitionTime, c.Reason, c.Message})
	}
	if m := s.ModifyVolumeStatus; m != nil {
		out.ModifyVolumeStatus = &internalModifyVolumeStatus{m.TargetVolumeAttributesClassName, m.Status}
	}
	if len(s.HealthStatus) > 0 && string(s.HealthStatus) != "null" {
		// Kept as written (v1 JSON); its fields' names differ only in case.
		var h internalHealthStatus
		if json.Unmarshal(s.HealthStatus, &h) == nil {
			out.HealthStatus = &h
		}
	}
	return out
}

// claimsWithoutTypeMeta is a copy of claims with no apiVersion and kind.
func claimsWithoutTypeMeta(claims []api.PersistentVolumeClaim) []api.PersistentVolumeClaim {
	if claims == nil {
		return nil
	}
	out := make([]api.PersistentVolumeClaim, len(claims))
	copy(out, claims)
	for i := range out {
		out[i].TypeMeta = api.TypeMeta{}
	}
	return out
}
