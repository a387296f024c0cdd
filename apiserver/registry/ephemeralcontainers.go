package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
)

// UpdateEphemeralContainers is PUT pods/NAME/ephemeralcontainers: of the
// Pod given, only spec.ephemeralContainers is taken; they may be added,
// never changed or removed. Its resourceVersion, if set, is a precondition.
func UpdateEphemeralContainers(ctx context.Context, pods *Store, ns, name string, in *api.Pod, dryRun bool) (*api.Pod, error) {
	if in.Name != "" && in.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", in.Name, name))
	}
	out, err := pods.Mutate(ctx, ns, name, in.ResourceVersion, WriteOptions{DryRun: dryRun, Subresource: "ephemeralcontainers"},
		func(cur api.Object) (api.Object, error) {
			old, ok := cur.(*api.Pod)
			if !ok {
				return nil, apierrors.NewInternalError(fmt.Errorf("pods store holds %T", cur))
			}
			pod := api.DeepCopy(old)
			pod.Spec.EphemeralContainers = api.DeepCopy(in).Spec.EphemeralContainers
			for i := range pod.Spec.EphemeralContainers {
				defaults.Container(&pod.Spec.EphemeralContainers[i].Container)
			}
			if errs := validation.ValidatePodEphemeralContainersUpdate(pod, old); len(errs) > 0 {
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

// PatchEphemeralContainers applies a patch to the Pod as the subresource
// shows it (the whole Pod, as kubectl debug's strategic-merge patch of
// spec.ephemeralContainers expects), then updates as
// UpdateEphemeralContainers.
func PatchEphemeralContainers(ctx context.Context, pods *Store, ns, name string, pt PatchType, data []byte, dryRun bool) (*api.Pod, error) {
	return patchPodSubresource(ctx, pods, ns, name, pt, data, func(pod *api.Pod) (*api.Pod, error) {
		return UpdateEphemeralContainers(ctx, pods, ns, name, pod, dryRun)
	})
}

// patchPodSubresource is a PATCH of a pod subresource that shows the whole
// Pod (ephemeralcontainers, resize): the patch applies to the stored Pod,
// decoded as a request body is, and update writes the result. A conflict
// on our own read's resourceVersion retries; one on a resourceVersion the
// patch set is the client's.
func patchPodSubresource(ctx context.Context, pods *Store, ns, name string, pt PatchType, data []byte, update func(*api.Pod) (*api.Pod, error)) (*api.Pod, error) {
	apply, err := pods.patcher(pt, data)
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < maxUpdateRetries; attempt++ {
		cur, err := pods.Get(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		curJSON, err := json.Marshal(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(curJSON)
		if err != nil {
			return nil, err
		}
		var pod api.Pod
		if err := fieldvalidation.Decode(patched, &pod); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch produced a Pod that cannot be decoded: %v", err))
		}
		userRV := pod.ResourceVersion != cur.GetObjectMeta().ResourceVersion
		if !userRV {
			// Our own read's version: a conflict retries instead of failing.
			pod.ResourceVersion = cur.GetObjectMeta().ResourceVersion
		}
		out, err := update(&pod)
		if apierrors.IsConflict(err) && !userRV {
			continue
		}
		return out, err
	}
	return nil, apierrors.NewConflict(pods.GR, name, errors.New("too many concurrent writers"))
}
