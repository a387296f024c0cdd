package ingress

import (
	"github.com/minik8s/minik8s/api"
)

// Annotations about Ingress classes.
const (
	// AnnotationIsDefaultIngressClass marks the IngressClass Ingresses
	// without a class get (networking.k8s.io/v1's
	// AnnotationIsDefaultIngressClass).
	AnnotationIsDefaultIngressClass = "ingressclass.kubernetes.io/is-default-class"
	// AnnotationIngressClass is the deprecated per-Ingress class annotation
	// that spec.ingressClassName replaced.
	AnnotationIngressClass = "kubernetes.io/ingress.class"
)

// Class says which Ingresses a controller owns.
type Class struct {
	// Controller is the spec.controller of the controller's IngressClasses.
	Controller string
	// Name is the class name the deprecated annotation may give.
	Name string
}

// Owns reports whether the controller serves ing, given every
// IngressClass: spec.ingressClassName first, then the annotation, then the
// default class.
func (c Class) Owns(ing *api.Ingress, classes []*api.IngressClass) bool {
	byName := func(name string) *api.IngressClass {
		for _, ic := range classes {
			if ic.Name == name {
				return ic
			}
		}
		return nil
	}
	if ing.Spec.IngressClassName != nil {
		ic := byName(*ing.Spec.IngressClassName)
		return ic != nil && ic.Spec.Controller == c.Controller
	}
	if v, ok := ing.Annotations[AnnotationIngressClass]; ok {
		if v == c.Name {
			return true
		}
		ic := byName(v)
		return ic != nil && ic.Spec.Controller == c.Controller
	}
	def := DefaultClass(classes)
	return def != nil && def.Spec.Controller == c.Controller
}

// DefaultClass is the IngressClass the DefaultIngressClass admission
// plugin would give an Ingress without one: of those annotated as default,
// the newest, then the first by name; nil when none is.
func DefaultClass(classes []*api.IngressClass) *api.IngressClass {
	var def *api.IngressClass
	for _, ic := range classes {
		if ic.Annotations[AnnotationIsDefaultIngressClass] != "true" {
			continue
		}
		if def == nil || ic.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			ic.CreationTimestamp.Equal(def.CreationTimestamp.Time) && ic.Name < def.Name {
			def = ic
		}
	}
	return def
}
