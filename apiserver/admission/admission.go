package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Operation is the kind of write being admitted.
type Operation string

// Operations, as Kubernetes names them.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one write to admit.
type Attributes struct {
	Operation   Operation
	Resource    api.ResourceInfo
	Subresource string
	Namespace   string
	Name        string
	// Object is the object being written (nil for DELETE); mutating plugins
	// may change it in place.
	Object api.Object
	// OldObject is the stored object for UPDATE and DELETE.
	OldObject api.Object
	User      *request.User
	DryRun    bool
	// Decode, if set, is what decoding gives an object of the resource's
	// own kind beyond the built-in defaults, applied to what a mutating
	// webhook's patch makes of it (kube's admission ObjectInterfaces: its
	// converter and defaulter): a custom resource is pruned against its
	// CRD's structural schema and defaulted.
	Decode func(obj api.Object)
	// TypeConverter is the resource's schema as server-side apply types
	// it, which MutatingAdmissionPolicy's apply configurations merge
	// with; nil for a resource without a field manager.
	TypeConverter managedfields.TypeConverter
}

// Plugin is a named admission step. A plugin implements Mutator, Validator,
// or both.
type Plugin interface {
	Name() string
	// Handles reports whether the plugin cares about this operation.
	Handles(op Operation) bool
}

// Mutator may change the object being admitted.
type Mutator interface {
	Plugin
	Admit(ctx context.Context, a *Attributes) error
}

// Validator may refuse the object being admitted; it must not change it.
type Validator interface {
	Plugin
	Validate(ctx context.Context, a *Attributes) error
}

// Chain runs its plugins' mutating steps, then their validating steps.
type Chain struct {
	plugins []Plugin
}

// NewChain returns a chain of plugins in order.
func NewChain(plugins ...Plugin) *Chain { return &Chain{plugins: plugins} }

// Plugins returns the plugins in order.
func (c *Chain) Plugins() []Plugin { return c.plugins }

// Admit runs every mutating plugin that handles a.Operation, stopping at the first error.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	if c == nil {
		return nil
	}
	for _, p := range c.plugins {
		if m, ok := p.(Mutator); ok && p.Handles(a.Operation) {
			if err := m.Admit(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate runs every validating plugin that handles a.Operation, stopping at the first error.
func (c *Chain) Validate(ctx context.Context, a *Attributes) error {
	if c == nil {
		return nil
	}
	for _, p := range c.plugins {
		if v, ok := p.(Validator); ok && p.Handles(a.Operation) {
			if err := v.Validate(ctx, a); err != nil {
				return err
			}
		}
	}
	return nil
}
