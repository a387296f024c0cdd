package informer_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
)

// exampleTB stands in for the *testing.T a real test passes to clienttest.
type exampleTB struct{ cleanups []func() }

func (*exampleTB) Helper()                        {}
func (e *exampleTB) Cleanup(f func())             { e.cleanups = append(e.cleanups, f) }
func (*exampleTB) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (e *exampleTB) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// Example shows the controller pattern every minik8s controller follows:
// handlers only enqueue keys, a worker drains the queue, and sync re-reads
// the cache, treats NotFound as done, and copies before it writes.
func Example() {
	tb := &exampleTB{}
	defer tb.cleanup()
	srv := clienttest.NewServer(tb, &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "a"}})
	c := srv.Client()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	factory := informer.NewFactory(c, informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	leases := informer.Shared[api.Lease](factory, "", client.ListOptions{})
	queue := workqueue.NewRateLimiting[string](nil, workqueue.WithName("example"))
	defer queue.ShutDown()
	enqueue := func(l *api.Lease) { queue.Add(cache.MetaNamespaceKeyFunc(l)) }
	leases.AddEventHandler(informer.Handler[api.Lease]{
		OnAdd:    func(l *api.Lease, _ bool) { enqueue(l) },
		OnUpdate: func(_, l *api.Lease) { enqueue(l) },
		OnDelete: func(l *api.Lease, _ bool) { enqueue(l) },
	})
	factory.Start(ctx)
	factory.WaitForCacheSync(ctx)

	// sync marks every lease with an annotation.
	sync := func(key string) error {
		ns, name, err := cache.SplitMetaNamespaceKey(key)
		if err != nil {
			return nil // a bad key will never succeed
		}
		cached, err := leases.Lister().Namespace(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if cached.Annotations["example.com/seen"] == "true" {
			return nil
		}
		l := api.DeepCopy(cached) // never modify the cache
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations["example.com/seen"] = "true"
		_, err = client.Resource[api.Lease](c).Namespace(ns).Update(ctx, l)
		return err
	}
	go func() {
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			if err := sync(key); err != nil {
				queue.AddRateLimited(key)
			} else {
				queue.Forget(key)
			}
			queue.Done(key)
		}
	}()

	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if l, err := leases.Lister().Namespace("ns").Get("a"); err == nil && l.Annotations["example.com/seen"] == "true" {
			break
		}
	}
	for _, a := range srv.Actions() {
		if a.Verb != "watch" {
			fmt.Println(a)
		}
	}
	// Output:
	// list leases.coordination.k8s.io
	// update leases.coordination.k8s.io ns/a
}
