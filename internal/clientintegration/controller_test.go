package clientintegration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
)

// mirrorController is a sample-controller-shaped controller: every
// ConfigMap labelled mirror=true gets a copy named NAME-mirror with the
// same data, kept up to date and deleted with its source. Handlers only
// enqueue keys; sync re-reads the cache.
type mirrorController struct {
	c     *client.Client
	cms   *informer.Informer[api.ConfigMap]
	queue *workqueue.RateLimitingQueue[string]

	// hold, while not nil, makes sync of that key wait until it is closed.
	mu        sync.Mutex
	holdKey   string
	hold      chan struct{}
	syncs     map[string]int
	failFirst map[string]bool // keys whose first sync fails
}

func (m *mirrorController) enqueue(cm *api.ConfigMap) { m.queue.Add(cache.MetaNamespaceKeyFunc(cm)) }

func (m *mirrorController) handler() informer.Handler[api.ConfigMap] {
	return informer.Handler[api.ConfigMap]{
		OnAdd:    func(cm *api.ConfigMap, _ bool) { m.enqueue(cm) },
		OnUpdate: func(_, cm *api.ConfigMap) { m.enqueue(cm) },
		OnDelete: func(cm *api.ConfigMap, _ bool) { m.enqueue(cm) },
	}
}

func (m *mirrorController) worker(ctx context.Context) {
	for {
		key, shutdown := m.queue.Get()
		if shutdown {
			return
		}
		func() {
			defer m.queue.Done(key)
			if err := m.sync(ctx, key); err != nil {
				m.queue.AddRateLimited(key)
				return
			}
			m.queue.Forget(key)
		}()
	}
}

var errInjected = errors.New("injected failure")

func (m *mirrorController) sync(ctx context.Context, key string) error {
	m.mu.Lock()
	m.syncs[key]++
	n := m.syncs[key]
	hold := m.hold
	if key != m.holdKey {
		hold = nil
	}
	fail := m.failFirst[key] && n == 1
	m.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if fail {
		return errInjected
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	mirrors := client.Resource[api.ConfigMap](m.c).Namespace(ns)
	src, err := m.cms.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		err := mirrors.Delete(ctx, name+"-mirror", nil)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if src.Labels["mirror"] != "true" {
		return nil
	}
	cur, err := m.cms.Lister().Namespace(ns).Get(name + "-mirror")
	switch {
	case apierrors.IsNotFound(err):
		_, err := mirrors.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name + "-mirror"}, Data: maps.Clone(src.Data)})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		// The cache lags our own create: read the mirror from the server.
		if cur, err = mirrors.Get(ctx, name+"-mirror"); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	switch {
	case maps.Equal(cur.Data, src.Data):
		return nil
	default:
		up := api.DeepCopy(cur) // never modify the cache
		up.Data = maps.Clone(src.Data)
		_, err := mirrors.Update(ctx, up)
		return err // a conflict comes back through the queue
	}
}

func (m *mirrorController) syncCount(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.syncs[key]
}

// TestController runs the mirror controller against a real server: it
// converges, a key changed many times while its sync runs is synced only
// once more (the queue de-duplicates), a failing sync is retried, and a
// deletion cleans up.
func TestController(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx := testContext(t)
	ns := createNamespace(ctx, t, c, "controller")
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)

	factory := informer.NewFactory(c, informer.FactoryOptions{Logger: quietLogger()})
	m := &mirrorController{
		c:   c,
		cms: informer.Shared[api.ConfigMap](factory, ns, client.ListOptions{}),
		queue: workqueue.NewRateLimiting[string](workqueue.NewItemExponentialFailureRateLimiter[string](
			10*time.Millisecond, time.Second)),
		syncs:     map[string]int{},
		failFirst: map[string]bool{ns + "/flaky": true},
		holdKey:   ns + "/busy",
		hold:      make(chan struct{}),
	}
	m.cms.AddEventHandler(m.handler())
	// Handlers only enqueue; count the notifications for "busy" as well.
	var busyNotes sync.WaitGroup
	busyNotes.Add(6) // the add and five updates
	m.cms.AddEventHandler(informer.Handler[api.ConfigMap]{
		OnAdd: func(cm *api.ConfigMap, _ bool) {
			if cm.Name == "busy" {
				busyNotes.Done()
			}
		},
		OnUpdate: func(old, cm *api.ConfigMap) {
			if cm.Name == "busy" && old.ResourceVersion != cm.ResourceVersion {
				busyNotes.Done()
			}
		},
	})
	runCtx, stop := context.WithCancel(ctx)
	var workers sync.WaitGroup
	t.Cleanup(func() {
		stop()
		m.queue.ShutDown()
		workers.Wait()
		factory.Wait()
	})
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "pre", Labels: map[string]string{"mirror": "true"}}, Data: map[string]string{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	factory.Start(runCtx)
	if !factory.WaitForCacheSync(ctx) {
		t.Fatal("no cache sync")
	}
	for range 2 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			m.worker(runCtx)
		}()
	}

	mirrorData := func(name string) (map[string]string, error) {
		cm, err := cms.Get(ctx, name+"-mirror")
		if err != nil {
			return nil, err
		}
		return cm.Data, nil
	}
	waitMirror := func(name string, want map[string]string) {
		t.Helper()
		eventually(t, 10*time.Second, fmt.Sprintf("mirror of %s = %v", name, want), func() bool {
			got, err := mirrorData(name)
			return err == nil && maps.Equal(got, want)
		})
	}
	waitMirror("pre", map[string]string{"a": "1"})

	// "busy": its first sync is held while it changes five times. The
	// queue marks it dirty once, so it is synced exactly once more, and
	// that sync sees the final state.
	busy, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "busy", Labels: map[string]string{"mirror": "true"}}, Data: map[string]string{"v": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "busy's first sync to start", func() bool { return m.syncCount(ns+"/busy") == 1 })
	for i := 1; i <= 5; i++ {
		busy.Data["v"] = fmt.Sprint(i)
		if busy, err = cms.Update(ctx, busy); err != nil {
			t.Fatal(err)
		}
	}
	waitGroup(t, &busyNotes, 10*time.Second, "the five updates of busy to be handled")
	if n := m.syncCount(ns + "/busy"); n != 1 {
		t.Fatalf("busy synced %d times while its first sync was running", n)
	}
	close(m.hold)
	waitMirror("busy", map[string]string{"v": "5"})
	time.Sleep(200 * time.Millisecond) // room for (wrong) extra syncs
	if n := m.syncCount(ns + "/busy"); n != 2 {
		t.Errorf("busy synced %d times for an add and five updates during the first sync, want 2", n)
	}

	// "flaky": the first sync fails and is retried after a back-off.
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "flaky", Labels: map[string]string{"mirror": "true"}}, Data: map[string]string{"f": "1"}}); err != nil {
		t.Fatal(err)
	}
	waitMirror("flaky", map[string]string{"f": "1"})
	if n := m.syncCount(ns + "/flaky"); n != 2 {
		t.Errorf("flaky synced %d times, want 2 (one failure, one retry)", n)
	}
	if n := m.queue.NumRequeues(ns + "/flaky"); n != 0 {
		t.Errorf("flaky requeues after success = %d, want 0 (Forget)", n)
	}

	// A change of the source reaches the mirror through an update of a
	// copy of the cached mirror.
	if _, err := cms.Patch(ctx, "pre", client.MergePatchType, []byte(`{"data":{"a":"2"}}`)); err != nil {
		t.Fatal(err)
	}
	waitMirror("pre", map[string]string{"a": "2"})

	// Deleting the source deletes the mirror.
	if err := cms.Delete(ctx, "pre", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pre's mirror to go", func() bool {
		_, err := mirrorData("pre")
		return apierrors.IsNotFound(err)
	})
	eventually(t, 5*time.Second, "an empty queue", func() bool { return m.queue.Len() == 0 })
}

func waitGroup(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}
