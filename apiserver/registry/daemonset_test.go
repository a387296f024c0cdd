package registry

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestDaemonSetTemplateGeneration: the annotation follows kube's
// spec.templateGeneration: 1 at create (or the creator's, when at least 1),
// kept over a writer's value, one more when the template changes, kept by
// a status write.
func TestDaemonSetTemplateGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := daemonSetStrategy{}
	ds := func(image string, annotations map[string]string) *api.DaemonSet {
		return &api.DaemonSet{ObjectMeta: api.ObjectMeta{Name: "d", Annotations: annotations},
			Spec: api.DaemonSetSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: image}}}}}}
	}
	gen := func(d *api.DaemonSet) string { return d.Annotations[templateGenerationAnnotation] }

	created := ds("a", nil)
	s.DefaultCreate(created)
	if gen(created) != "0" {
		t.Errorf("before PrepareForCreate: %q, want kube's 0 for the field manager", gen(created))
	}
	s.PrepareForCreate(ctx, created)
	if gen(created) != "1" {
		t.Errorf("created: %q, want 1", gen(created))
	}
	for in, want := range map[string]string{"5": "5", "-3": "1", "x": "1"} {
		d := ds("a", map[string]string{templateGenerationAnnotation: in})
		s.PrepareForCreate(ctx, d)
		if gen(d) != want {
			t.Errorf("created with %q: %q, want %q", in, gen(d), want)
		}
	}

	same := ds("a", map[string]string{templateGenerationAnnotation: "9"})
	s.DefaultUpdate(same, created)
	s.PrepareForUpdate(ctx, same, created)
	if gen(same) != "1" {
		t.Errorf("update keeping the template, the writer's 9: %q, want 1", gen(same))
	}
	changed := ds("b", nil)
	s.DefaultUpdate(changed, created)
	s.PrepareForUpdate(ctx, changed, created)
	if gen(changed) != "2" {
		t.Errorf("update of the template: %q, want 2", gen(changed))
	}
	status := ds("b", nil)
	s.PrepareForStatusUpdate(ctx, status, changed)
	if gen(status) != "2" {
		t.Errorf("status write: %q, want 2", gen(status))
	}
}

// TestGenerationRules: the kinds kube-apiserver writes with and without a
// generation.
func TestGenerationRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		group, resource string
		create          int64
		counts          bool
	}{
		{"apps", "deployments", 1, true},
		{"", "pods", 1, true},
		{"apiextensions.k8s.io", "customresourcedefinitions", 1, true},
		{"parity.example.com", "widgets", 1, true},
		{"", "configmaps", 0, false},
		{"", "services", 0, false},
		{"rbac.authorization.k8s.io", "clusterroles", 0, false},
		{"", "events", 0, false},
		{"storage.k8s.io", "csidrivers", 0, true},
	} {
		r := generationRuleFor(api.ResourceInfo{Group: c.group, Resource: c.resource})
		if r.atCreate() != c.create || r.counts() != c.counts {
			t.Errorf("%s/%s: at create %d, counts %v; want %d, %v", c.group, c.resource, r.atCreate(), r.counts(), c.create, c.counts)
		}
	}
}
