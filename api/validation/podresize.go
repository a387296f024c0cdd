package validation

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

// ValidatePodResize checks a write of pods/NAME/resize, as kube v1.37's
// ValidatePodResize: pod is the result (the current pod with the request's
// container resources and resize policies, PrepareResize) and old the
// current pod. Static and Windows pods cannot be resized; the QoS class
// may not change; requests and limits may be changed and added, not
// removed; containers may not be added, removed, renamed or reordered;
// only the cpu and memory of containers (and of the pod) may change.
func ValidatePodResize(pod, old *api.Pod) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validatePodMetadataAndSpec(pod)...)
	if _, ok := old.Annotations[api.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == "windows" {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	specPath := field.NewPath("spec")
	if podQOS(old) != api.ComputePodQOS(pod) {
		errs = append(errs, field.Invalid(specPath, string(pod.Status.QOSClass), "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(old) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}

	// What may change is undone in a copy; anything left is forbidden.
	spec := api.DeepCopy(&pod.Spec)
	if podLevelResourcesSet(old) || podLevelResourcesSet(pod) {
		errs = append(errs, validatePodLevelResourcesResize(pod, old, spec, specPath)...)
	}
	if orderErrs := validateResizeContainerOrder(pod, old, specPath); len(orderErrs) > 0 {
		return append(errs, orderErrs...)
	}
	for i := range old.Spec.InitContainers {
		errs = append(errs, validateContainerResize(&pod.Spec.InitContainers[i].Resources, &old.Spec.InitContainers[i].Resources,
			specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		errs = append(errs, validateContainerResize(&pod.Spec.Containers[i].Resources, &old.Spec.Containers[i].Resources,
			specPath.Child("containers").Index(i).Child("resources"))...)
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		dropCPUMemoryResources(c, &old.Spec.Containers[i])
		if !semanticEqual(*c, old.Spec.Containers[i]) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways
		modified := !semanticEqual(*c, old.Spec.InitContainers[i])
		dropCPUMemoryResources(c, &old.Spec.InitContainers[i])
		if !semanticEqual(*c, old.Spec.InitContainers[i]) {
			errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if modified && !sidecar {
			for _, p := range c.ResizePolicy {
				if p.RestartPolicy == api.RestartContainer {
					errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	// InPlacePodVerticalScalingMemoryBackedVolumes is alpha, off in kube
	// v1.37: volumes are immutable.
	if !semanticEqual(pod.Spec.Volumes, old.Spec.Volumes) {
		errs = append(errs, field.Forbidden(specPath.Child("volumes"), "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(errs) > 0 {
		return errs
	}
	if !semanticEqual(*spec, old.Spec) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return errs
}

// podQOS is the pod's QoS class as its status has it, else computed
// (kube's GetPodQOS).
func podQOS(pod *api.Pod) api.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return api.ComputePodQOS(pod)
}

// resizeSupported: the node reports the resources of the pod's first
// running container (a kubelet that can resize; kube's version-skew check).
// A pod without running containers is assumed resizable.
func resizeSupported(pod *api.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func podLevelResourcesSet(pod *api.Pod) bool {
	r := pod.Spec.Resources
	return r != nil && len(r.Requests)+len(r.Limits) > 0
}

// validatePodLevelResourcesResize checks spec.resources: it may not be
// removed, nor its requests or limits; only cpu and memory may change
// (undone in spec, a copy of pod's).
func validatePodLevelResourcesResize(pod, old *api.Pod, spec *api.PodSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old.Spec.Resources != nil && pod.Spec.Resources == nil {
		return append(errs, field.Forbidden(specPath.Child("resources"), "pod-level resources cannot be removed"))
	}
	if old.Spec.Resources != nil {
		if resourcesRemoved(pod.Spec.Resources.Requests, old.Spec.Resources.Requests) {
			errs = append(errs, field.Forbidden(specPath.Child("resources").Child("requests"), "pod-level resource requests cannot be removed"))
		}
		if resourcesRemoved(pod.Spec.Resources.Limits, old.Spec.Resources.Limits) {
			errs = append(errs, field.Forbidden(specPath.Child("resources").Child("limits"), "pod-level resource limits cannot be removed"))
		}
	}
	if spec.Resources != nil {
		var oldReqs, oldLims api.ResourceList
		if old.Spec.Resources != nil {
			oldReqs, oldLims = old.Spec.Resources.Requests, old.Spec.Resources.Limits
		}
		spec.Resources.Requests = dropCPUMemoryUpdates(spec.Resources.Requests, oldReqs)
		spec.Resources.Limits = dropCPUMemoryUpdates(spec.Resources.Limits, oldLims)
		if old.Spec.Resources == nil && len(spec.Resources.Requests) == 0 && len(spec.Resources.Limits) == 0 && len(spec.Resources.Claims) == 0 {
			spec.Resources = nil
		}
	}
	if !semanticEqual(spec.Resources, old.Spec.Resources) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable at pod-level"))
	}
	return errs
}

// validateResizeContainerOrder: containers may not be added, removed,
// renamed or reordered on resize.
func validateResizeContainerOrder(pod, old *api.Pod, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name     string
		cs, olds []api.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(l.cs) != len(l.olds) {
			errs = append(errs, field.Forbidden(specPath.Child(l.name), l.name+" may not be added or removed on resize"))
			continue
		}
		for i := range l.olds {
			if l.cs[i].Name != l.olds[i].Name {
				errs = append(errs, field.Forbidden(specPath.Child(l.name).Index(i).Child("name"), l.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateContainerResize: requests and limits may not be removed.
func validateContainerResize(r, old *api.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if resourcesRemoved(r.Requests, old.Requests) {
		errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(r.Limits, old.Limits) {
		errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

func resourcesRemoved(l, old api.ResourceList) bool {
	if len(old) > len(l) {
		return true
	}
	for name := range old {
		if _, ok := l[name]; !ok {
			return true
		}
	}
	return false
}

// dropCPUMemoryUpdates is l with its cpu and memory as old has them.
func dropCPUMemoryUpdates(l, old api.ResourceList) api.ResourceList {
	var out api.ResourceList
	if l == nil {
		if old == nil {
			return nil
		}
		out = api.ResourceList{}
	} else {
		out = make(api.ResourceList, len(l))
		for k, v := range l {
			out[k] = v
		}
	}
	delete(out, api.ResourceCPU)
	delete(out, api.ResourceMemory)
	if q, ok := old[api.ResourceCPU]; ok {
		out[api.ResourceCPU] = q
	}
	if q, ok := old[api.ResourceMemory]; ok {
		out[api.ResourceMemory] = q
	}
	return out
}

// dropCPUMemoryResources gives c the cpu and memory requests and limits of
// old, keeping its resource claims.
func dropCPUMemoryResources(c, old *api.Container) {
	c.Resources = api.ResourceRequirements{
		Limits:   dropCPUMemoryUpdates(c.Resources.Limits, old.Resources.Limits),
		Requests: dropCPUMemoryUpdates(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}
