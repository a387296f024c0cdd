package controller

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/informer"
)

// PodClaimIndex indexes pods by the namespace/name of every
// PersistentVolumeClaim their volumes use (a persistentVolumeClaim volume,
// or the claim named POD-VOLUME of an ephemeral volume), as kube's
// common.PodPVCIndex, for the PV and pvc-protection controllers.
const PodClaimIndex = "pod-pvc-index"

// PodClaimNames are the names of the claims pod's volumes use.
func PodClaimNames(pod *api.Pod) []string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case len(v.Ephemeral) > 0 && string(v.Ephemeral) != "null":
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}

// AddPodClaimIndex adds PodClaimIndex to the pod informer (a no-op when
// another controller sharing it added it already).
func AddPodClaimIndex(pods *informer.Informer[api.Pod]) error {
	return AddIndex(pods, PodClaimIndex, func(pod *api.Pod) []string {
		var keys []string
		for _, name := range PodClaimNames(pod) {
			keys = append(keys, pod.Namespace+"/"+name)
		}
		return keys
	})
}

// PodsUsingClaim are the cached pods whose volumes use the claim ns/name.
func PodsUsingClaim(pods *informer.Informer[api.Pod], key string) []*api.Pod {
	out, _ := pods.Store().ByIndex(PodClaimIndex, key)
	return out
}

// IsPodTerminated is kube's volume util.IsPodTerminated: the pod
// finished (Succeeded, Failed), or is being deleted with no container
// running any more. Its volumes are then no longer in use.
func IsPodTerminated(pod *api.Pod) bool {
	if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
		return true
	}
	if pod.DeletionTimestamp == nil {
		return false
	}
	for _, list := range [][]api.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, s := range list {
			if s.State.Terminated == nil && s.State.Waiting == nil {
				return false
			}
		}
	}
	return true
}
