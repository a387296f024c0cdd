package registry

import (
	"context"
	"maps"
	"strconv"

	"github.com/minik8s/minik8s/api"
)

// templateGenerationAnnotation is where apps/v1 keeps a DaemonSet's
// template generation (the internal spec.templateGeneration of kube's
// apps types): kube-apiserver writes it on every DaemonSet it serves, 1 at
// creation (or what the creator set, when at least 1), one more each time
// the pod template changes, and never what a later writer sets.
const templateGenerationAnnotation = "deprecated.daemonset.template.generation"

// daemonSetStrategy is kube's DaemonSet strategy: the template generation
// above on top of the common rules.
type daemonSetStrategy struct{ BaseStrategy }

var (
	_ Strategy       = daemonSetStrategy{}
	_ StatusStrategy = daemonSetStrategy{}
)

// DefaultCreate gives the object the annotation kube's conversion from its
// internal type writes before the field manager sees the object, so that
// a writer other than an apply owns it, as in kube ("0" until
// PrepareForCreate counts it, when the writer set none).
func (s daemonSetStrategy) DefaultCreate(obj api.Object) {
	s.BaseStrategy.DefaultCreate(obj)
	if templateGeneration(obj) == 0 {
		setTemplateGeneration(obj, 0)
	}
}

// DefaultUpdate is DefaultCreate for a replacement.
func (s daemonSetStrategy) DefaultUpdate(obj, old api.Object) {
	s.BaseStrategy.DefaultUpdate(obj, old)
	if templateGeneration(obj) == 0 {
		setTemplateGeneration(obj, 0)
	}
}

func (s daemonSetStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	s.BaseStrategy.PrepareForCreate(ctx, obj)
	gen := templateGeneration(obj)
	if gen < 1 {
		gen = 1
	}
	setTemplateGeneration(obj, gen)
}

// PrepareForUpdate keeps the stored template generation, one more when
// the pod template changed (the Store has counted the new generation).
func (daemonSetStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	gen := templateGeneration(old)
	if !sameEncoding(obj.(*api.DaemonSet).Spec.Template, old.(*api.DaemonSet).Spec.Template) {
		gen++
	}
	setTemplateGeneration(obj, gen)
}

// PrepareForStatusUpdate keeps the template generation: a status writer
// cannot change the spec it stands for.
func (daemonSetStrategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {
	setTemplateGeneration(obj, templateGeneration(old))
}

// templateGeneration reads the annotation; none, or one that is not a
// number, is 0.
func templateGeneration(obj api.Object) int64 {
	gen, err := strconv.ParseInt(obj.GetObjectMeta().Annotations[templateGenerationAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return gen
}

func setTemplateGeneration(obj api.Object, gen int64) {
	m := obj.GetObjectMeta()
	// The map may be shared with the object the writer sent.
	m.Annotations = maps.Clone(m.Annotations)
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[templateGenerationAnnotation] = strconv.FormatInt(gen, 10)
}
