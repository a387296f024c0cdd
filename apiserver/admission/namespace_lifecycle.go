package admission

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// NamespaceGetter reads a namespace's phase. found is false when it does not
// exist. live asks for a read from storage rather than from a cache.
type NamespaceGetter interface {
	NamespacePhase(ctx context.Context, name string, live bool) (phase string, found bool, err error)
}

// forceLiveLookupTTL is how long after a namespace deletion passes through
// this plugin creates in it are checked against storage, not the cache, which
// may not have seen the deletion yet (Kubernetes does the same).
const forceLiveLookupTTL = 30 * time.Second

// NamespaceLifecycle refuses creating objects in a namespace that does not
// exist or is terminating, and deleting the namespaces the system needs.
type NamespaceLifecycle struct {
	Namespaces NamespaceGetter
	// Immortal namespaces may not be deleted.
	Immortal []string

	mu       sync.Mutex
	liveTill map[string]time.Time
}

func (p *NamespaceLifecycle) markDeleted(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.liveTill == nil {
		p.liveTill = map[string]time.Time{}
	}
	now := time.Now()
	for n, t := range p.liveTill {
		if now.After(t) {
			delete(p.liveTill, n)
		}
	}
	p.liveTill[name] = now.Add(forceLiveLookupTTL)
}

func (p *NamespaceLifecycle) forceLive(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.liveTill[name]
	return ok && time.Now().Before(t)
}

var _ Validator = (*NamespaceLifecycle)(nil)

// Name implements Plugin.
func (*NamespaceLifecycle) Name() string { return "NamespaceLifecycle" }

// Handles implements Plugin.
func (*NamespaceLifecycle) Handles(op Operation) bool { return op == Create || op == Delete }

// Validate implements Validator.
func (p *NamespaceLifecycle) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group == "" && a.Resource.Resource == "namespaces" {
		if a.Operation == Delete && a.Subresource == "" {
			for _, n := range p.Immortal {
				if n == a.Name {
					return apierrors.NewForbidden(apierrors.GroupResource{Resource: "namespaces"}, a.Name,
						fmt.Errorf("this namespace may not be deleted"))
				}
			}
			p.markDeleted(a.Name)
		}
		return nil
	}
	if a.Operation != Create || !a.Resource.Namespaced || a.Namespace == "" {
		return nil
	}
	// Subresource creates (bindings, evictions) act on existing objects.
	if a.Subresource != "" {
		return nil
	}
	phase, found, err := p.Namespaces.NamespacePhase(ctx, a.Namespace, p.forceLive(a.Namespace))
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if !found {
		return apierrors.NewNotFound(apierrors.GroupResource{Resource: "namespaces"}, a.Namespace)
	}
	if phase == string(api.NamespaceTerminating) {
		gr := apierrors.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}
		return apierrors.NewForbidden(gr, a.Name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	}
	return nil
}
