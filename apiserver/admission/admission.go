package admission

import (
	"context"
	"reflect"

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

	// reinvoke is kube's reinvocation context, kept across the chain's
	// second pass (see Chain.Admit and Reinvocations).
	reinvoke struct {
		second, requested bool
		plugins           map[string]*Reinvocations
	}
}

// Reinvocations is what one plugin whose hooks (webhooks, policy bindings)
// may ask to run again keeps across the chain's passes, as kube's
// webhookReinvokeContext and policyReinvokeContext: which hooks with
// reinvocationPolicy IfNeeded ran since the object last changed, which of
// them must run again, and the object as the plugin left it.
type Reinvocations struct {
	last     api.Object
	invoked  map[string]bool
	reinvoke map[string]bool
}

// Reinvocations returns plugin's reinvocation state for this request.
func (a *Attributes) Reinvocations(plugin string) *Reinvocations {
	if a.reinvoke.plugins == nil {
		a.reinvoke.plugins = map[string]*Reinvocations{}
	}
	r := a.reinvoke.plugins[plugin]
	if r == nil {
		r = &Reinvocations{invoked: map[string]bool{}, reinvoke: map[string]bool{}}
		a.reinvoke.plugins[plugin] = r
	}
	return r
}

// Reinvoking reports whether the chain is in its second pass.
func (a *Attributes) Reinvoking() bool { return a.reinvoke.second }

// Begin starts one of the plugin's passes: in the second, an object
// changed since the plugin last saw it (by the in-tree plugins or another
// plugin's hooks) makes every IfNeeded hook that ran before run again.
func (r *Reinvocations) Begin(a *Attributes) {
	if a.reinvoke.second && !reflect.DeepEqual(r.last, a.Object) {
		r.requireAll()
	}
}

// End records the object as the plugin leaves it.
func (r *Reinvocations) End(a *Attributes) {
	r.last = nil
	if a.Object != nil {
		r.last = api.DeepCopyObject(a.Object)
	}
}

// Skip reports whether hook id does not run in this pass: in the second
// pass only the hooks that must run again do.
func (r *Reinvocations) Skip(a *Attributes, id string) bool {
	return a.reinvoke.second && !r.reinvoke[id]
}

// Ran records that hook id ran: a change it made makes the IfNeeded hooks
// that ran before it run again and asks the chain for a second pass; an
// IfNeeded hook is one of those from now on.
func (r *Reinvocations) Ran(a *Attributes, id string, changed, ifNeeded bool) {
	if changed {
		r.Changed(a)
	}
	if ifNeeded {
		r.invoked[id] = true
	}
}

// Changed records that the plugin changed the object: the IfNeeded hooks
// that ran before run again, in a second pass of the chain.
func (r *Reinvocations) Changed(a *Attributes) {
	r.requireAll()
	a.reinvoke.requested = true
}

// requireAll makes every IfNeeded hook that ran since the last change run
// again.
func (r *Reinvocations) requireAll() {
	for id := range r.invoked {
		r.reinvoke[id] = true
	}
	clear(r.invoked)
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

// Admit runs every mutating plugin that handles a.Operation, stopping at
// the first error; when a plugin's hook changed the object and asked for it
// (Reinvocations.Ran), every mutating plugin runs once more, as kube's
// reinvoker: the in-tree ones again, the webhooks and policies only those
// with reinvocationPolicy IfNeeded that a later change concerns.
func (c *Chain) Admit(ctx context.Context, a *Attributes) error {
	if c == nil {
		return nil
	}
	if err := c.admitOnce(ctx, a); err != nil {
		return err
	}
	if a.reinvoke.requested && !a.reinvoke.second {
		a.reinvoke.second = true
		return c.admitOnce(ctx, a)
	}
	return nil
}

func (c *Chain) admitOnce(ctx context.Context, a *Attributes) error {
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
