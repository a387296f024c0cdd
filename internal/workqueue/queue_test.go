package workqueue

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func get[K comparable](t *testing.T, q *Queue[K]) K {
	t.Helper()
	ch := make(chan K, 1)
	go func() {
		k, shutdown := q.Get()
		if shutdown {
			close(ch)
			return
		}
		ch <- k
	}()
	select {
	case k, ok := <-ch:
		if !ok {
			t.Fatal("queue shut down")
		}
		return k
	case <-time.After(5 * time.Second):
		t.Fatal("Get blocked")
	}
	panic("unreachable")
}

func TestBasicSemantics(t *testing.T) {
	t.Parallel()
	q := New[string]()
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	q.Add("a") // collapses
	if q.Len() != 2 {
		t.Fatalf("Len %d, want 2", q.Len())
	}
	if k := get(t, q); k != "a" {
		t.Fatalf("got %q, want FIFO a", k)
	}
	// a is processing: adding it marks it dirty but does not queue it.
	q.Add("a")
	q.Add("a")
	if q.Len() != 1 {
		t.Fatalf("Len %d while a processing, want 1", q.Len())
	}
	if k := get(t, q); k != "b" {
		t.Fatalf("got %q, want b (a must not be handed out twice)", k)
	}
	q.Done("a")
	if q.Len() != 1 {
		t.Fatalf("Len %d after Done(a), want a re-queued", q.Len())
	}
	if k := get(t, q); k != "a" {
		t.Fatalf("got %q, want a", k)
	}
	q.Done("a")
	q.Done("b")
	if q.Len() != 0 {
		t.Fatalf("Len %d, want 0", q.Len())
	}
}

func TestShutDown(t *testing.T) {
	t.Parallel()
	q := New[int]()
	q.Add(1)
	q.Add(2)
	blocked := New[int]()
	done := make(chan bool)
	go func() {
		_, sd := blocked.Get()
		done <- sd
	}()
	time.Sleep(10 * time.Millisecond)
	blocked.ShutDown()
	if sd := <-done; !sd {
		t.Error("blocked Get not released with shutdown")
	}

	q.ShutDown()
	q.Add(3) // ignored
	if !q.ShuttingDown() {
		t.Error("ShuttingDown false")
	}
	// Queued items are still handed out, then shutdown.
	for _, want := range []int{1, 2} {
		k, sd := q.Get()
		if sd || k != want {
			t.Fatalf("Get = %d, %v; want %d", k, sd, want)
		}
		q.Done(k)
	}
	if _, sd := q.Get(); !sd {
		t.Error("Get after drain did not report shutdown")
	}
}

func TestShutDownWithDrain(t *testing.T) {
	t.Parallel()
	q := New[string]()
	q.Add("a")
	k, _ := q.Get()
	var finished atomic.Bool
	returned := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("ShutDownWithDrain returned while an item was processing")
	case <-time.After(50 * time.Millisecond):
	}
	finished.Store(true)
	q.Done(k)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("ShutDownWithDrain did not return after Done")
	}
	if !finished.Load() {
		t.Fatal("impossible")
	}
}

func TestAddAfter(t *testing.T) {
	t.Parallel()
	q := New[string]()
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("late", time.Hour)
	q.AddAfter("late", 60*time.Millisecond) // the earlier time wins
	q.AddAfter("now", 0)
	if k := get(t, q); k != "now" {
		t.Fatalf("got %q", k)
	}
	if q.Len() != 0 {
		t.Fatal("delayed item queued early")
	}
	if k := get(t, q); k != "late" {
		t.Fatalf("got %q", k)
	}
	if el := time.Since(start); el < 50*time.Millisecond || el > 30*time.Minute {
		t.Errorf("delayed item arrived after %v, want about 60ms", el)
	}

	// A later time does not postpone an earlier one.
	q.AddAfter("x", 20*time.Millisecond)
	q.AddAfter("x", time.Hour)
	if k := get(t, q); k != "x" {
		t.Fatalf("got %q", k)
	}

	// Delayed adds are dropped at shutdown.
	q2 := New[string]()
	q2.AddAfter("y", 10*time.Millisecond)
	q2.ShutDown()
	time.Sleep(30 * time.Millisecond)
	if q2.Len() != 0 {
		t.Error("delayed add survived shutdown")
	}
}

// TestConcurrentWorkers checks, under the race detector, that no item is
// processed by two workers at once and that every add is followed by a
// processing of its item.
func TestConcurrentWorkers(t *testing.T) {
	t.Parallel()
	q := NewRateLimiting[int](NewItemExponentialFailureRateLimiter[int](time.Microsecond, time.Millisecond))
	const keys, adds, workers = 20, 2000, 8
	var (
		mu         sync.Mutex
		inFlight   = map[int]bool{}
		lastAdd    = map[int]int{} // sequence of the last add per key
		lastSeen   = map[int]int{} // add sequence current when processing began
		seq        int
		violations int
	)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, sd := q.Get()
				if sd {
					return
				}
				mu.Lock()
				if inFlight[k] {
					violations++
				}
				inFlight[k] = true
				lastSeen[k] = seq
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
				mu.Lock()
				inFlight[k] = false
				mu.Unlock()
				if rand.IntN(10) == 0 {
					q.AddRateLimited(k)
				} else {
					q.Forget(k)
				}
				q.Done(k)
			}
		}()
	}
	for i := 0; i < adds; i++ {
		k := rand.IntN(keys)
		mu.Lock()
		seq++
		lastAdd[k] = seq
		mu.Unlock()
		q.Add(k)
	}
	// Wait until every key has been processed after its last add.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		pending := 0
		for k, s := range lastAdd {
			if lastSeen[k] < s {
				pending++
			}
		}
		mu.Unlock()
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d keys never processed after their last add", pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	q.ShutDownWithDrain()
	wg.Wait()
	if violations > 0 {
		t.Fatalf("%d times an item was processed by two workers at once", violations)
	}
}

func TestRateLimiters(t *testing.T) {
	t.Parallel()
	exp := NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second)
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i, w := range want {
		if d := exp.When("a"); d != w*time.Millisecond {
			t.Errorf("failure %d: %v, want %v", i, d, w*time.Millisecond)
		}
	}
	if exp.NumRequeues("a") != len(want) || exp.NumRequeues("b") != 0 {
		t.Errorf("NumRequeues %d", exp.NumRequeues("a"))
	}
	if d := exp.When("b"); d != 5*time.Millisecond {
		t.Errorf("items are independent: %v", d)
	}
	exp.Forget("a")
	if d := exp.When("a"); d != 5*time.Millisecond {
		t.Errorf("after Forget: %v", d)
	}
	huge := NewItemExponentialFailureRateLimiter[int](time.Millisecond, 1000*time.Second)
	for i := 0; i < 200; i++ {
		huge.When(1)
	}
	if d := huge.When(1); d != 1000*time.Second {
		t.Errorf("overflow not capped: %v", d)
	}

	bucket := NewBucketRateLimiter[string](10, 2)
	if bucket.When("a") != 0 || bucket.When("b") != 0 {
		t.Error("burst not free")
	}
	if d := bucket.When("c"); d < 50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("past the burst: %v, want about 100ms", d)
	}
	if bucket.NumRequeues("a") != 0 {
		t.Error("bucket counts requeues")
	}

	maxOf := NewMaxOfRateLimiter[string](
		NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
		NewItemExponentialFailureRateLimiter[string](3*time.Millisecond, 4*time.Millisecond),
	)
	for i, w := range []time.Duration{3, 4, 4, 8} {
		if d := maxOf.When("a"); d != w*time.Millisecond {
			t.Errorf("MaxOf step %d: %v, want %vms", i, d, w)
		}
	}
	if maxOf.NumRequeues("a") != 4 {
		t.Errorf("MaxOf NumRequeues %d", maxOf.NumRequeues("a"))
	}
	maxOf.Forget("a")
	if maxOf.NumRequeues("a") != 0 {
		t.Error("MaxOf Forget")
	}

	def := DefaultControllerRateLimiter[string]()
	if d := def.When("x"); d != 5*time.Millisecond {
		t.Errorf("default first delay %v, want 5ms", d)
	}
}

func TestRateLimitingQueue(t *testing.T) {
	t.Parallel()
	q := NewRateLimiting[string](NewItemExponentialFailureRateLimiter[string](20*time.Millisecond, time.Second))
	defer q.ShutDown()
	q.AddRateLimited("a")
	if q.Len() != 0 {
		t.Fatal("rate-limited item queued at once")
	}
	if q.NumRequeues("a") != 1 {
		t.Errorf("NumRequeues %d", q.NumRequeues("a"))
	}
	if k := get(t, q.Queue); k != "a" {
		t.Fatalf("got %q", k)
	}
	q.Forget("a")
	q.Done("a")
	if q.NumRequeues("a") != 0 {
		t.Errorf("NumRequeues after Forget %d", q.NumRequeues("a"))
	}
}

func metricValue(t *testing.T, reg *prometheus.Registry, name, queue string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == queue {
					return m
				}
			}
		}
	}
	t.Fatalf("metric %s{name=%q} not found", name, queue)
	return nil
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if err := RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("test-%d", rand.Int())
	q := NewRateLimiting[string](NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond), WithName(name))
	q.Add("a")
	q.Add("b")
	q.Add("a")
	if v := metricValue(t, reg, "workqueue_adds_total", name).GetCounter().GetValue(); v != 2 {
		t.Errorf("adds %v, want 2", v)
	}
	if v := metricValue(t, reg, "workqueue_depth", name).GetGauge().GetValue(); v != 2 {
		t.Errorf("depth %v, want 2", v)
	}
	k, _ := q.Get()
	time.Sleep(20 * time.Millisecond)
	if v := metricValue(t, reg, "workqueue_longest_running_processor_seconds", name).GetGauge().GetValue(); v < 0.015 {
		t.Errorf("longest running %v, want >= 0.015", v)
	}
	q.AddRateLimited(k)
	q.Done(k)
	if v := metricValue(t, reg, "workqueue_retries_total", name).GetCounter().GetValue(); v != 1 {
		t.Errorf("retries %v", v)
	}
	if v := metricValue(t, reg, "workqueue_work_duration_seconds", name).GetHistogram().GetSampleCount(); v != 1 {
		t.Errorf("work duration samples %v", v)
	}
	if v := metricValue(t, reg, "workqueue_queue_duration_seconds", name).GetHistogram().GetSampleCount(); v != 1 {
		t.Errorf("queue duration samples %v", v)
	}
	q.ShutDown()
}
