package informer

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// ResourceListerWatcher lists and watches one resource through a client,
// with fixed label and field selectors.
type ResourceListerWatcher[T any, PT interface {
	*T
	api.Object
}] struct {
	rc            *client.ResourceClient[T, PT]
	labelSelector string
	fieldSelector string
}

var _ ListerWatcher[api.Lease] = (*ResourceListerWatcher[api.Lease, *api.Lease])(nil)

// For returns a ListerWatcher for the registered kind T in namespace ("" for
// all namespaces or a cluster-scoped kind); only the LabelSelector and
// FieldSelector of sel are used.
func For[T any, PT interface {
	*T
	api.Object
}](c *client.Client, namespace string, sel client.ListOptions) *ResourceListerWatcher[T, PT] {
	return ForResource(client.Resource[T, PT](c).Namespace(namespace), sel)
}

// ForResource is For over an existing typed client (for kinds outside
// api.Resources, or a client scoped already).
func ForResource[T any, PT interface {
	*T
	api.Object
}](rc *client.ResourceClient[T, PT], sel client.ListOptions) *ResourceListerWatcher[T, PT] {
	return &ResourceListerWatcher[T, PT]{rc: rc, labelSelector: sel.LabelSelector, fieldSelector: sel.FieldSelector}
}

// GroupResource names the resource, for the informer's lister.
func (lw *ResourceListerWatcher[T, PT]) GroupResource() apierrors.GroupResource {
	return lw.rc.GroupResource()
}

// List implements ListerWatcher.
func (lw *ResourceListerWatcher[T, PT]) List(ctx context.Context, opts client.ListOptions) (*api.List[T], error) {
	opts.LabelSelector, opts.FieldSelector = lw.labelSelector, lw.fieldSelector
	return lw.rc.List(ctx, opts)
}

// Watch implements ListerWatcher.
func (lw *ResourceListerWatcher[T, PT]) Watch(ctx context.Context, opts client.ListOptions) (client.Watcher[T], error) {
	opts.LabelSelector, opts.FieldSelector = lw.labelSelector, lw.fieldSelector
	return lw.rc.Watch(ctx, opts)
}

// FactoryOptions configure a Factory.
type FactoryOptions struct {
	// Resync is given to every informer the factory makes.
	Resync time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Transform is given to every informer the factory makes (see
	// Options.Transform), e.g. StripManagedFields.
	Transform func(api.Object)
}

// StripManagedFields drops an object's managedFields, which controllers
// never read and which are often the larger part of an object: kube's
// components set this transform on their informers. An update sent from
// a stripped copy keeps the stored managedFields (none sent: kept).
func StripManagedFields(obj api.Object) { obj.GetObjectMeta().ManagedFields = nil }

// Factory shares informers among the controllers of a process: one per
// (kind, namespace, label selector, field selector).
type Factory struct {
	client *client.Client
	opts   FactoryOptions

	mu        sync.Mutex
	informers map[factoryKey]runnable
	started   map[factoryKey]bool
	wg        sync.WaitGroup
}

type factoryKey struct {
	typ                     reflect.Type
	namespace, label, field string
}

type runnable interface {
	Run(ctx context.Context)
	HasSynced() bool
}

// NewFactory returns a factory making informers over c.
func NewFactory(c *client.Client, opts FactoryOptions) *Factory {
	return &Factory{client: c, opts: opts, informers: map[factoryKey]runnable{}, started: map[factoryKey]bool{}}
}

// Shared returns the factory's informer for T in namespace with sel's label
// and field selectors, making it on first use. T must be a kind of
// api.Resources (it panics otherwise, like client.Resource). The informer
// runs once Start is called (again, for informers requested after an earlier
// Start); add handlers and indexers before or after.
func Shared[T any, PT interface {
	*T
	api.Object
}](f *Factory, namespace string, sel client.ListOptions) *Informer[T] {
	key := factoryKey{typ: reflect.TypeFor[T](), namespace: namespace, label: sel.LabelSelector, field: sel.FieldSelector}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(*Informer[T])
	}
	opts := Options[T]{Resync: f.opts.Resync, Logger: f.opts.Logger}
	if tf := f.opts.Transform; tf != nil {
		opts.Transform = func(o *T) { tf(PT(o)) }
	}
	inf := New[T, PT](For[T, PT](f.client, namespace, sel), opts)
	f.informers[key] = inf
	return inf
}

// Start runs every informer not started yet, until ctx ends.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, inf := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			inf.Run(ctx)
		}()
	}
}

// WaitForCacheSync waits until every started informer has synced; false if
// ctx ended first.
func (f *Factory) WaitForCacheSync(ctx context.Context) bool {
	f.mu.Lock()
	var infs []Syncer
	for key, inf := range f.informers {
		if f.started[key] {
			infs = append(infs, inf)
		}
	}
	f.mu.Unlock()
	return WaitForCacheSync(ctx, infs...)
}

// Wait blocks until every started informer has returned (after the context
// given to Start ended).
func (f *Factory) Wait() { f.wg.Wait() }
