package api

import (
	"encoding/json"
	"fmt"
)

// PodAPIObjectReference is kube's podutil.HasAPIObjectReference: the first
// kind of API object a pod depends on, named as kube's NodeRestriction and
// static pod source name it ("serviceaccounts", "secrets (via secret
// volumes)", ...), or "" when the pod needs none. Mirror pods and static
// pods may reference none: a node could not read them for such a pod. err
// is set for a volume of a type it does not know.
func PodAPIObjectReference(pod *Pod) (resource string, err error) {
	if pod.Spec.ServiceAccountName != "" {
		return "serviceaccounts", nil
	}
	if !VisitPodSecretNames(pod, func(string) bool { return false }) {
		return "secrets", nil
	}
	if !VisitPodConfigMapNames(pod, func(string) bool { return false }) {
		return "configmaps", nil
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return "resourceclaims", nil
	}
	for _, v := range pod.Spec.Volumes {
		src := &v.VolumeSource
		raw := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
		switch {
		case src.HostPath != nil, src.EmptyDir != nil, src.DownwardAPI != nil,
			raw(src.AWSElasticBlockStore), raw(src.AzureDisk), raw(src.CephFS), raw(src.Cinder), raw(src.FC),
			raw(src.FlexVolume), raw(src.Flocker), raw(src.GCEPersistentDisk), raw(src.GitRepo), raw(src.Image),
			raw(src.ISCSI), raw(src.NFS), raw(src.PhotonPersistentDisk), raw(src.PortworxVolume), raw(src.Quobyte),
			raw(src.RBD), raw(src.ScaleIO), raw(src.StorageOS), raw(src.VsphereVolume):
			continue
		case src.ConfigMap != nil:
			return "configmaps (via configmap volumes)", nil
		case src.Secret != nil:
			return "secrets (via secret volumes)", nil
		case raw(src.CSI):
			return "csidrivers (via CSI volumes)", nil
		case raw(src.Glusterfs):
			return "endpoints (via glusterFS volumes)", nil
		case src.PersistentVolumeClaim != nil:
			return "persistentvolumeclaims", nil
		case raw(src.Ephemeral):
			return "persistentvolumeclaims (via ephemeral volumes)", nil
		case raw(src.AzureFile):
			return "secrets (via azureFile volumes)", nil
		case src.Projected != nil:
			for _, s := range src.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					return "configmaps (via projected volumes)", nil
				case s.Secret != nil:
					return "secrets (via projected volumes)", nil
				case s.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)", nil
				case s.ClusterTrustBundle != nil:
					return "clustertrustbundles", nil
				case s.PodCertificate != nil:
					return "podcertificates", nil
				case s.DownwardAPI != nil:
					continue
				default:
					return "", fmt.Errorf("unknown source for projected volume %q", v.Name)
				}
			}
		default:
			return "", fmt.Errorf("unknown volume type for volume  %q", v.Name)
		}
	}
	return "", nil
}
