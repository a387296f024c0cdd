package admission

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// RuntimeClassGetter reads RuntimeClasses for the RuntimeClass plugin.
type RuntimeClassGetter interface {
	// GetRuntimeClass returns the class named name; found is false when
	// there is none.
	GetRuntimeClass(ctx context.Context, name string) (rc *api.RuntimeClass, found bool, err error)
}

// RuntimeClass is Kubernetes' RuntimeClass admission plugin, for pods
// being created: one naming a RuntimeClass that does not exist is refused
// (403, `pod rejected: RuntimeClass "x" not found`); the class's overhead
// becomes the pod's spec.overhead and its scheduling constraints join the
// pod's nodeSelector (a conflicting value is refused) and tolerations. A
// pod that sets an overhead of its own must match its class's, and may not
// set one without a class that defines it.
type RuntimeClass struct {
	Classes RuntimeClassGetter
}

var (
	_ Mutator   = (*RuntimeClass)(nil)
	_ Validator = (*RuntimeClass)(nil)
)

// Name implements Plugin.
func (*RuntimeClass) Name() string { return "RuntimeClass" }

// Handles implements Plugin: creates only.
func (*RuntimeClass) Handles(op Operation) bool { return op == Create }

// Admit implements Mutator: the overhead and scheduling of the pod's class.
func (r *RuntimeClass) Admit(ctx context.Context, a *Attributes) error {
	pod, rc, err := r.prepare(ctx, a)
	if err != nil || rc == nil {
		return err
	}
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !sameResources(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return NewForbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		pod.Spec.Overhead = nil
		for k, q := range rc.Overhead.PodFixed {
			if pod.Spec.Overhead == nil {
				pod.Spec.Overhead = api.ResourceList{}
			}
			pod.Spec.Overhead[k] = q.DeepCopy()
		}
	}
	if s := rc.Scheduling; s != nil {
		if pod.Spec.NodeSelector == nil && len(s.NodeSelector) > 0 {
			pod.Spec.NodeSelector = map[string]string{}
		}
		for k, v := range s.NodeSelector {
			if pv, ok := pod.Spec.NodeSelector[k]; ok && pv != v {
				return NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, pv))
			}
			pod.Spec.NodeSelector[k] = v
		}
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

// Validate implements Validator: the pod's overhead is its class's.
func (r *RuntimeClass) Validate(ctx context.Context, a *Attributes) error {
	pod, rc, err := r.prepare(ctx, a)
	if err != nil || pod == nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !sameResources(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return NewForbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
		}
		return nil
	}
	if pod.Spec.Overhead != nil {
		return NewForbidden(a, errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}

// prepare returns the pod being created and its RuntimeClass (nil for a
// pod naming none); both are nil for a request the plugin ignores.
func (r *RuntimeClass) prepare(ctx context.Context, a *Attributes) (*api.Pod, *api.RuntimeClass, error) {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil, nil, nil
	}
	pod, ok := a.Object.(*api.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if pod.Spec.RuntimeClassName == nil {
		return pod, nil, nil
	}
	rc, found, err := r.Classes.GetRuntimeClass(ctx, *pod.Spec.RuntimeClassName)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return nil, nil, NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	return pod, rc, nil
}

// sameResources is semantic equality of resource lists: the same names
// with equal quantities (nil and empty are the same).
func sameResources(a, b api.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if p, ok := b[k]; !ok || q.Cmp(p) != 0 {
			return false
		}
	}
	return true
}

// mergeTolerations is kube's tolerations.MergeTolerations: first then
// second, leaving out each toleration another one kept (or a later,
// different one) already covers.
func mergeTolerations(first, second []api.Toleration) []api.Toleration {
	all := append(append([]api.Toleration(nil), first...), second...)
	var merged []api.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if toleratesSuperset(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !reflect.DeepEqual(t, later) && toleratesSuperset(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// toleratesSuperset: every taint t tolerates, ss tolerates too.
func toleratesSuperset(ss, t api.Toleration) bool {
	if reflect.DeepEqual(ss, t) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != api.TolerationOpExists) {
		return false
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == api.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case api.TolerationOpEqual, "":
		return t.Operator == api.TolerationOpEqual && t.Value == ss.Value
	case api.TolerationOpExists:
		return true
	}
	return false
}
