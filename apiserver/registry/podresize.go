package registry

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/validation"
)

// UpdateResize is PUT pods/NAME/resize (in-place pod resize), kube's pod
// resize strategy: of the Pod given, only its containers' (and init
// containers') resources and resizePolicy are taken, everything else
// stays as stored; the result is checked by ValidatePodResize and gets a
// new generation when it changes the spec. Its resourceVersion, if set,
// is a precondition; opts.Subresource is set here.
func UpdateResize(ctx context.Context, pods *Store, ns, name string, in *api.Pod, opts WriteOptions) (*api.Pod, error) {
	if in.Name != "" && in.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", in.Name, name))
	}
	if err := pods.checkNamespace(&in.ObjectMeta, ns); err != nil {
		return nil, err
	}
	opts.Subresource = "resize"
	out, err := pods.Mutate(ctx, ns, name, in.ResourceVersion, opts, func(cur api.Object) (api.Object, error) {
		old, ok := cur.(*api.Pod)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("pods store holds %T", cur))
		}
		// The request's pod as kube decodes it: defaulted (requests
		// from limits, amounts rounded to milli-units).
		req := api.DeepCopy(in)
		defaults.Pod(req)
		pod := PrepareResize(req, old)
		if errs := validation.ValidatePodResize(pod, old); len(errs) > 0 {
			return nil, pods.invalid(name, errs)
		}
		return pod, nil
	})
	if err != nil {
		return nil, err
	}
	p, _ := out.(*api.Pod)
	return p, nil
}

// PrepareResize is kube's dropNonResizeUpdates: the stored pod old with
// the containers' and init containers' resources and resizePolicy of pod
// (and its pod-level resources, InPlacePodLevelResourcesVerticalScaling
// being on in v1.37), and pod's managedFields. When pod adds, removes,
// renames or reorders containers it is returned as it is, for the
// validation to refuse.
func PrepareResize(pod, old *api.Pod) *api.Pod {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return pod
	}
	containers, ok1 := resizedContainers(pod.Spec.Containers, old.Spec.Containers)
	inits, ok2 := resizedContainers(pod.Spec.InitContainers, old.Spec.InitContainers)
	if !ok1 || !ok2 {
		return pod
	}
	out := api.DeepCopy(old)
	out.Spec.Containers, out.Spec.InitContainers = containers, inits
	out.Spec.Resources = pod.Spec.Resources
	if out.Spec.Resources == nil && old.Spec.Resources != nil {
		// A client unaware of pod-level resources keeps them (kube's
		// PodLevelResourcesFixDefaulting).
		out.Spec.Resources = api.DeepCopy(old.Spec.Resources)
	}
	out.ManagedFields = pod.ManagedFields
	return out
}

// resizedContainers is a copy of old with the resources and resize
// policies of cs; false when a name differs (a rename or reorder).
func resizedContainers(cs, old []api.Container) ([]api.Container, bool) {
	if len(cs) == 0 {
		return cs, true
	}
	out := make([]api.Container, len(old))
	for i := range old {
		if cs[i].Name != old[i].Name {
			return nil, false
		}
		out[i] = *api.DeepCopy(&old[i])
		out[i].Resources = *api.DeepCopy(&cs[i].Resources)
		out[i].ResizePolicy = api.DeepCopy(&cs[i]).ResizePolicy
	}
	return out, true
}

// PatchResize applies a patch to the Pod as the subresource shows it (the
// whole Pod: a strategic-merge patch of spec.containers[].resources),
// then updates as UpdateResize.
func PatchResize(ctx context.Context, pods *Store, ns, name string, pt PatchType, data []byte, opts WriteOptions) (*api.Pod, error) {
	return patchPodSubresource(ctx, pods, ns, name, pt, data, func(pod *api.Pod) (*api.Pod, error) {
		return UpdateResize(ctx, pods, ns, name, pod, opts)
	})
}
