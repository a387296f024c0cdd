package admission

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// fakeNamespaces answers from a map and records whether each lookup was live.
type fakeNamespaces struct {
	phases map[string]string
	live   []bool
}

func (f *fakeNamespaces) NamespacePhase(_ context.Context, name string, live bool) (string, bool, error) {
	f.live = append(f.live, live)
	p, ok := f.phases[name]
	return p, ok, nil
}

func TestNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	cm, _ := api.LookupResource("", "configmaps")
	nsr, _ := api.LookupResource("", "namespaces")
	f := &fakeNamespaces{phases: map[string]string{"default": "Active", "old": "Terminating", "going": "Active"}}
	p := &NamespaceLifecycle{Namespaces: f, Immortal: []string{"default"}}
	ctx := context.Background()
	create := func(ns string) error {
		return p.Validate(ctx, &Attributes{Operation: Create, Resource: cm, Namespace: ns, Name: "x"})
	}
	if err := create("default"); err != nil {
		t.Fatalf("create in default: %v", err)
	}
	if err := create("missing"); !apierrors.IsNotFound(err) || err.Error() != `namespaces "missing" not found` {
		t.Fatalf("create in missing: %v", err)
	}
	if err := create("old"); !apierrors.IsForbidden(err) {
		t.Fatalf("create in terminating: %v", err)
	}
	if err := p.Validate(ctx, &Attributes{Operation: Delete, Resource: nsr, Name: "default"}); !apierrors.IsForbidden(err) {
		t.Fatalf("delete default: %v", err)
	}
	// After a namespace deletion is admitted, creates in it are checked live.
	if err := p.Validate(ctx, &Attributes{Operation: Delete, Resource: nsr, Name: "going"}); err != nil {
		t.Fatal(err)
	}
	f.live = nil
	_ = create("going")
	_ = create("default")
	if len(f.live) != 2 || !f.live[0] || f.live[1] {
		t.Fatalf("live lookups = %v, want [true false]", f.live)
	}
}
