package controller

import (
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/cache"
)

// Shared by the endpoints and endpointslice controllers.

// FindPort resolves a service port's targetPort for a pod, as kube's
// podutil.FindPort: a number is used as is, a name is looked up among the
// pod's container ports with the same protocol.
func FindPort(pod *api.Pod, sp *api.ServicePort) (int32, error) {
	target := sp.TargetPort
	if target.Type == api.String && target.StrVal != "" {
		proto := sp.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				pp := p.Protocol
				if pp == "" {
					pp = api.ProtocolTCP
				}
				if p.Name == target.StrVal && pp == proto {
					return p.ContainerPort, nil
				}
			}
		}
		return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
	}
	if target.Type == api.Int && target.IntVal != 0 {
		return target.IntVal, nil
	}
	return sp.Port, nil
}

// ShouldPodBeInEndpoints is kube's: a pod with an IP that has not
// finished (a terminal phase, or Succeeded under OnFailure) backs its
// services; terminating pods are included only when includeTerminating.
func ShouldPodBeInEndpoints(pod *api.Pod, includeTerminating bool) bool {
	if pod.Status.PodIP == "" {
		return false
	}
	if !includeTerminating && pod.DeletionTimestamp != nil {
		return false
	}
	switch pod.Spec.RestartPolicy {
	case api.RestartPolicyNever:
		return pod.Status.Phase != api.PodFailed && pod.Status.Phase != api.PodSucceeded
	case api.RestartPolicyOnFailure:
		return pod.Status.Phase != api.PodSucceeded
	}
	return pod.Status.Phase != api.PodFailed && pod.Status.Phase != api.PodSucceeded
}

// ServiceKeysForPod returns the keys of the services in the pod's
// namespace whose selector matches the pod's labels.
func ServiceKeysForPod(services cache.Lister[api.Service], pod *api.Pod) []string {
	var out []string
	for _, svc := range services.Namespace(pod.Namespace).List(labels.Everything()) {
		if svc.Spec.Selector == nil {
			continue
		}
		if labels.SelectorFromValidatedSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
			out = append(out, cache.MetaNamespaceKeyFunc(svc))
		}
	}
	return out
}

// PodReference is the targetRef of an endpoint backed by pod.
func PodReference(pod *api.Pod) *api.ObjectReference {
	return &api.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
}
