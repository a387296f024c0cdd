package daemonset

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/history"
	"github.com/minik8s/minik8s/internal/podplacement"
)

// addDefaultTolerations adds the tolerations kube gives every daemon pod
// (util.AddOrUpdateDaemonPodTolerations), so that they run through node
// conditions their node's taints report.
func addDefaultTolerations(spec *api.PodSpec) {
	add := func(key string, effect api.TaintEffect) {
		for _, t := range spec.Tolerations {
			if t.Key == key && t.Effect == effect && t.Operator == api.TolerationOpExists {
				return
			}
		}
		spec.Tolerations = append(spec.Tolerations, api.Toleration{Key: key, Operator: api.TolerationOpExists, Effect: effect})
	}
	add(api.TaintNodeNotReady, api.TaintEffectNoExecute)
	add(api.TaintNodeUnreachable, api.TaintEffectNoExecute)
	add(api.TaintNodeDiskPressure, api.TaintEffectNoSchedule)
	add(api.TaintNodeMemoryPressure, api.TaintEffectNoSchedule)
	add(api.TaintNodePIDPressure, api.TaintEffectNoSchedule)
	add(api.TaintNodeUnschedulable, api.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(api.TaintNodeNetworkUnavailable, api.TaintEffectNoSchedule)
	}
}

// nodeNameAffinity pins the pod to node through its required node
// affinity, as kube's ReplaceDaemonSetPodNodeNameNodeAffinity: every term
// keeps its label expressions, its field requirements become metadata.name
// In [node].
func nodeNameAffinity(spec *api.PodSpec, node string) {
	field := []api.NodeSelectorRequirement{{Key: "metadata.name", Operator: api.NodeSelectorOpIn, Values: []string{node}}}
	if spec.Affinity == nil {
		spec.Affinity = &api.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &api.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{MatchFields: field}}}
		return
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		terms[i].MatchFields = field
	}
}

// targetNode is the node a daemon pod is on or pinned to.
func targetNode(pod *api.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == api.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// podTemplate is the template of the pods for node at hash.
func podTemplate(ds *api.DaemonSet, hash, node string) *api.PodTemplateSpec {
	t := api.DeepCopy(&ds.Spec.Template)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[history.HashLabel] = hash
	addDefaultTolerations(&t.Spec)
	nodeNameAffinity(&t.Spec, node)
	return t
}

// nodeShouldRunDaemonPod is kube's predicate: shouldRun when the node's
// labels, name and taints (NoSchedule and NoExecute) admit the pod;
// shouldContinueRunning when only NoExecute taints are held against it.
func nodeShouldRunDaemonPod(ds *api.DaemonSet, node *api.Node) (shouldRun, shouldContinueRunning bool) {
	pod := &api.Pod{Spec: podTemplate(ds, "", node.Name).Spec}
	if !podplacement.Matches(pod, node) {
		return false, false
	}
	if _, untolerated := podplacement.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, api.TaintEffectNoExecute); untolerated {
		return false, false
	}
	_, untolerated := podplacement.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, api.TaintEffectNoSchedule)
	return !untolerated, true
}
