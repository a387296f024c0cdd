package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
)

// Bind assigns a pod to a node (POST pods/NAME/binding), as the scheduler
// does. A pod already bound, or being deleted, is a 409 Conflict.
func Bind(ctx context.Context, pods *Store, ns, name string, b *api.Binding, dryRun bool) error {
	if b.Name != "" && b.Name != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the binding (%s) does not match the name on the URL (%s)", b.Name, name))
	}
	var errs field.ErrorList
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(apierrors.GroupKind{Kind: "Binding"}, name, errs)
	}
	_, err := pods.Mutate(ctx, ns, name, "", WriteOptions{DryRun: dryRun, Subresource: "binding"}, func(cur api.Object) (api.Object, error) {
		pod := cur.(*api.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(pods.GR, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(bindingGR, name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(bindingGR, name, fmt.Errorf("pod %s is already assigned to node %q", name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		// The nomination of a preemption is spent once the pod is bound
		// (kube's ClearingNominatedNodeNameAfterBinding, on since v1.35).
		pod.Status.NominatedNodeName = ""
		for k, v := range b.Annotations {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[k] = v
		}
		setPodCondition(pod, api.PodCondition{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: api.Now()})
		return pod, nil
	})
	return err
}

// bindingGR names the refusals of a binding the pod's state forbids, as
// kube's BindingREST names them.
var bindingGR = apierrors.GroupResource{Resource: "pods/binding"}

func setPodCondition(pod *api.Pod, c api.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			if pod.Status.Conditions[i].Status == c.Status {
				c.LastTransitionTime = pod.Status.Conditions[i].LastTransitionTime
			}
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

// scalable exposes the replica fields of the kinds with a /scale subresource.
func scalable(obj api.Object) (replicas **int32, status int32, sel *api.LabelSelector, err error) {
	switch o := obj.(type) {
	case *api.Deployment:
		return &o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector, nil
	case *api.ReplicaSet:
		return &o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector, nil
	case *api.StatefulSet:
		return &o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector, nil
	case *api.ReplicationController:
		return &o.Spec.Replicas, o.Status.Replicas, &api.LabelSelector{MatchLabels: o.Spec.Selector}, nil
	}
	return nil, 0, nil, fmt.Errorf("%T has no scale subresource", obj)
}

// Scaler is implemented by the strategies of kinds whose replica fields
// are known only at run time (a custom resource's scale subresource).
type Scaler interface {
	// Scale reads obj's desired and current replicas and its selector.
	Scale(obj api.Object) (spec, status int32, selector string, err error)
	// SetReplicas sets obj's desired replicas.
	SetReplicas(obj api.Object, n int32) error
}

func toScale(obj api.Object) (*api.Scale, error) {
	replicas, status, sel, err := scalable(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	selector := ""
	if sel != nil {
		s, err := labels.SelectorFromLabelSelector(sel)
		if err == nil {
			selector = s.String()
		}
	}
	spec := int32(0)
	if *replicas != nil {
		spec = **replicas
	}
	return newScale(obj, spec, status, selector), nil
}

func newScale(obj api.Object, spec, status int32, selector string) *api.Scale {
	m := obj.GetObjectMeta()
	return &api.Scale{
		TypeMeta: api.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: api.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp},
		Spec:   api.ScaleSpec{Replicas: spec},
		Status: api.ScaleStatus{Replicas: status, Selector: selector},
	}
}

// scaleOf is the Scale of obj, a object of st.
func scaleOf(st *Store, obj api.Object) (*api.Scale, error) {
	if sc, ok := st.strategy.(Scaler); ok {
		spec, status, sel, err := sc.Scale(obj)
		if err != nil {
			return nil, err
		}
		return newScale(obj, spec, status, sel), nil
	}
	return toScale(obj)
}

// GetScale returns the Scale of a deployment or replicaset.
func GetScale(ctx context.Context, st *Store, ns, name string) (*api.Scale, error) {
	obj, err := st.Get(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return scaleOf(st, obj)
}

// UpdateScale sets spec.replicas from a Scale; its resourceVersion, if set,
// is a precondition on the scaled object. opts gives dryRun and the field
// manager.
func UpdateScale(ctx context.Context, st *Store, ns, name string, sc *api.Scale, opts WriteOptions) (*api.Scale, error) {
	if sc.Name != "" && sc.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Name, name))
	}
	if sc.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: "autoscaling", Kind: "Scale"}, name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
	}
	opts.Subresource = "scale"
	out, err := st.Mutate(ctx, ns, name, sc.ResourceVersion, opts, func(cur api.Object) (api.Object, error) {
		if scaler, ok := st.strategy.(Scaler); ok {
			return cur, scaler.SetReplicas(cur, sc.Spec.Replicas)
		}
		replicas, _, _, err := scalable(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		n := sc.Spec.Replicas
		*replicas = &n
		return cur, nil
	})
	if err != nil {
		return nil, err
	}
	return scaleOf(st, out)
}

// PatchScale applies a patch to the Scale of a deployment or replicaset.
func PatchScale(ctx context.Context, st *Store, ns, name string, pt PatchType, data []byte, opts WriteOptions) (*api.Scale, error) {
	for attempt := 0; attempt < maxUpdateRetries; attempt++ {
		cur, err := GetScale(ctx, st, ns, name)
		if err != nil {
			return nil, err
		}
		curJSON, _ := json.Marshal(cur)
		apply, err := st.patcherFor(pt, data, patch.NoSchema)
		if err != nil {
			return nil, err
		}
		patched, err := apply(curJSON)
		if err != nil {
			return nil, err
		}
		var sc api.Scale
		if err := fieldvalidation.Decode(patched, &sc); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch produced a Scale that cannot be decoded: %v", err))
		}
		userRV := sc.ResourceVersion != cur.ResourceVersion
		out, err := UpdateScale(ctx, st, ns, name, &sc, opts)
		if apierrors.IsConflict(err) && !userRV {
			continue
		}
		return out, err
	}
	return nil, apierrors.NewConflict(st.GR, name, errors.New("too many concurrent writers"))
}

// Finalize replaces a namespace's spec.finalizers (PUT namespaces/NAME/finalize),
// as the namespace controller does once the namespace is empty.
func Finalize(ctx context.Context, st *Store, name string, ns *api.Namespace, opts WriteOptions) (api.Object, error) {
	if ns.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", ns.Name, name))
	}
	var errs field.ErrorList
	for i, f := range ns.Spec.Finalizers {
		if f == "" {
			errs = append(errs, field.Required(field.NewPath("spec", "finalizers").Index(i), ""))
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(apierrors.GroupKind{Kind: "Namespace"}, name, errs)
	}
	opts.Subresource = "finalize"
	return st.Mutate(ctx, "", name, ns.ResourceVersion, opts, func(cur api.Object) (api.Object, error) {
		cur.(*api.Namespace).Spec.Finalizers = ns.Spec.Finalizers
		return cur, nil
	})
}
