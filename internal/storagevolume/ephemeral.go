package storagevolume

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// EphemeralVolumeSource is a pod's generic ephemeral volume
// (volumes[].ephemeral), which the pod API keeps verbatim: the claim the
// ephemeral volume controller makes for the pod, as kube's
// core/v1.EphemeralVolumeSource.
type EphemeralVolumeSource struct {
	VolumeClaimTemplate *PersistentVolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
}

// PersistentVolumeClaimTemplate is the claim of an ephemeral volume: its
// labels and annotations and its spec are copied into the claim.
type PersistentVolumeClaimTemplate struct {
	api.ObjectMeta `json:"metadata,omitzero"`
	Spec           api.PersistentVolumeClaimSpec `json:"spec"`
}

// IsEphemeral reports whether v is a generic ephemeral volume.
func IsEphemeral(v *api.Volume) bool {
	return len(v.Ephemeral) > 0 && string(v.Ephemeral) != "null"
}

// PodVolumeClaimName is the claim a volume of pod uses ("" for none): a
// persistentVolumeClaim volume's, or for a generic ephemeral volume the
// claim named POD-VOLUME (kube's ephemeral.VolumeClaimName), with
// ephemeral true.
func PodVolumeClaimName(pod *api.Pod, v *api.Volume) (name string, ephemeral bool) {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName, false
	case IsEphemeral(v):
		return EphemeralClaimName(pod, v), true
	}
	return "", false
}

// EphemeralClaimName is the name of the claim of pod's ephemeral volume v.
func EphemeralClaimName(pod *api.Pod, v *api.Volume) string { return pod.Name + "-" + v.Name }

// EphemeralClaimTemplate decodes the claim template of the ephemeral
// volume v.
func EphemeralClaimTemplate(v *api.Volume) (*PersistentVolumeClaimTemplate, error) {
	var src EphemeralVolumeSource
	if err := json.Unmarshal(v.Ephemeral, &src); err != nil {
		return nil, fmt.Errorf("decode the ephemeral volume source: %w", err)
	}
	if src.VolumeClaimTemplate == nil {
		return nil, errors.New("the ephemeral volume source has no volumeClaimTemplate")
	}
	return src.VolumeClaimTemplate, nil
}

// VolumeIsForPod checks that the claim of an ephemeral volume was made for
// pod, as kube's ephemeral.VolumeIsForPod: pod is its controller. A claim
// of the same name made by someone else is never used in its place.
func VolumeIsForPod(pod *api.Pod, pvc *api.PersistentVolumeClaim) error {
	if pvc.Namespace != pod.Namespace || !api.IsControlledBy(&pvc.ObjectMeta, pod.UID) {
		return fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
	}
	return nil
}
