package admission

import (
	"context"
	"sort"

	"github.com/minik8s/minik8s/api"
)

// IngressClassLister lists the IngressClasses for DefaultIngressClass.
type IngressClassLister interface {
	ListIngressClasses(ctx context.Context) ([]*api.IngressClass, error)
}

// Annotations of the default IngressClass and of an Ingress' class in the
// deprecated form.
const (
	AnnotationIsDefaultIngressClass = "ingressclass.kubernetes.io/is-default-class"
	AnnotationIngressClass          = "kubernetes.io/ingress.class"
)

// DefaultIngressClass is Kubernetes' DefaultIngressClass admission plugin:
// an Ingress created without spec.ingressClassName and without the
// deprecated kubernetes.io/ingress.class annotation gets the default
// class, the IngressClass annotated
// ingressclass.kubernetes.io/is-default-class=true (of several, the newest;
// of equally new ones, the first by name). No default class leaves the
// Ingress alone.
type DefaultIngressClass struct {
	Classes IngressClassLister
}

var _ Mutator = (*DefaultIngressClass)(nil)

// Name implements Plugin.
func (*DefaultIngressClass) Name() string { return "DefaultIngressClass" }

// Handles implements Plugin: creates only.
func (*DefaultIngressClass) Handles(op Operation) bool { return op == Create }

// Admit implements Mutator.
func (d *DefaultIngressClass) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "networking.k8s.io" || a.Resource.Resource != "ingresses" || a.Subresource != "" {
		return nil
	}
	ing, ok := a.Object.(*api.Ingress)
	if !ok || ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[AnnotationIngressClass]; ok {
		return nil
	}
	classes, err := d.Classes.ListIngressClasses(ctx)
	if err != nil {
		return NewForbidden(a, err)
	}
	if def := defaultIngressClass(classes); def != nil {
		name := def.Name
		ing.Spec.IngressClassName = &name
	}
	return nil
}

// defaultIngressClass is the newest class marked default (first by name
// among equally new ones), or nil.
func defaultIngressClass(classes []*api.IngressClass) *api.IngressClass {
	var defaults []*api.IngressClass
	for _, c := range classes {
		if c.Annotations[AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, c)
		}
	}
	if len(defaults) == 0 {
		return nil
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if ti == tj {
			return defaults[i].Name < defaults[j].Name
		}
		return ti > tj
	})
	return defaults[0]
}
