package statefulset

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/history"
)

// Labels a StatefulSet puts on its pods, as kube.
const (
	PodNameLabel  = "statefulset.kubernetes.io/pod-name"
	PodIndexLabel = "apps.kubernetes.io/pod-index"
)

var podNameRE = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// parentAndOrdinal splits NAME-ORDINAL; the ordinal is -1 when the name is
// not of that form.
func parentAndOrdinal(pod *api.Pod) (string, int) {
	m := podNameRE.FindStringSubmatch(pod.Name)
	if m == nil {
		return "", -1
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", -1
	}
	return m[1], n
}

func podName(set *api.StatefulSet, ordinal int) string {
	return fmt.Sprintf("%s-%d", set.Name, ordinal)
}

// claimName is TEMPLATE-SET-ORDINAL.
func claimName(set *api.StatefulSet, tmpl *api.PersistentVolumeClaim, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", tmpl.Name, set.Name, ordinal)
}

// newPod builds the pod of ordinal from template at revision.
func newPod(set *api.StatefulSet, template *api.PodTemplateSpec, revision string, ordinal int) *api.Pod {
	ref := controller.NewControllerRef(&set.ObjectMeta, setKind.APIVersion, setKind.Kind)
	pod := controller.PodFromTemplate(template, set, ref)
	pod.GenerateName = ""
	pod.Name = podName(set, ordinal)
	pod.Namespace = set.Namespace
	setIdentity(set, pod, ordinal)
	setStorage(set, pod, ordinal)
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[history.HashLabel] = revision
	return pod
}

func setIdentity(set *api.StatefulSet, pod *api.Pod, ordinal int) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[PodNameLabel] = pod.Name
	pod.Labels[PodIndexLabel] = strconv.Itoa(ordinal)
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
}

// setStorage points the pod's volumes named after claim templates at the
// ordinal's claims, adding those the template does not mention.
func setStorage(set *api.StatefulSet, pod *api.Pod, ordinal int) {
	for i := range set.Spec.VolumeClaimTemplates {
		tmpl := &set.Spec.VolumeClaimTemplates[i]
		v := api.Volume{Name: tmpl.Name, VolumeSource: api.VolumeSource{
			PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: claimName(set, tmpl, ordinal)}}}
		found := false
		for j := range pod.Spec.Volumes {
			if pod.Spec.Volumes[j].Name == tmpl.Name {
				pod.Spec.Volumes[j] = v
				found = true
			}
		}
		if !found {
			pod.Spec.Volumes = append(pod.Spec.Volumes, v)
		}
	}
}

// identityMatches reports whether pod still carries ordinal's identity.
func identityMatches(set *api.StatefulSet, pod *api.Pod, ordinal int) bool {
	return pod.Name == podName(set, ordinal) && pod.Namespace == set.Namespace &&
		pod.Labels[PodNameLabel] == pod.Name && pod.Labels[PodIndexLabel] == strconv.Itoa(ordinal)
}

// newClaims returns the claims of ordinal, labelled with the selector's
// matchLabels as kube; with whenDeleted: Delete they are owned by the set.
func newClaims(set *api.StatefulSet, ordinal int) []*api.PersistentVolumeClaim {
	var out []*api.PersistentVolumeClaim
	for i := range set.Spec.VolumeClaimTemplates {
		c := api.DeepCopy(&set.Spec.VolumeClaimTemplates[i])
		c.TypeMeta = api.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		c.Name = claimName(set, &set.Spec.VolumeClaimTemplates[i], ordinal)
		c.Namespace = set.Namespace
		c.ResourceVersion, c.UID = "", ""
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			maps.Copy(c.Labels, set.Spec.Selector.MatchLabels)
		}
		if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil && p.WhenDeleted == "Delete" {
			f := false
			t := true
			c.OwnerReferences = []api.OwnerReference{{APIVersion: setKind.APIVersion, Kind: setKind.Kind, Name: set.Name,
				UID: set.UID, Controller: &f, BlockOwnerDeletion: &t}}
		}
		c.Status = api.PersistentVolumeClaimStatus{}
		out = append(out, c)
	}
	return out
}

func isCreated(p *api.Pod) bool     { return p.Status.Phase != "" }
func isTerminating(p *api.Pod) bool { return p.DeletionTimestamp != nil }
func isFailed(p *api.Pod) bool      { return p.Status.Phase == api.PodFailed }
func isSucceeded(p *api.Pod) bool   { return p.Status.Phase == api.PodSucceeded }

func isRunningAndReady(p *api.Pod) bool {
	return p.Status.Phase == api.PodRunning && controller.IsPodReady(p)
}

func isHealthy(p *api.Pod) bool { return isRunningAndReady(p) && !isTerminating(p) }

func revisionOf(p *api.Pod) string { return p.Labels[history.HashLabel] }
