package cacher_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/cacher"
)

// round is one write whose delivery the watchers time.
type round struct {
	start time.Time
	wg    sync.WaitGroup
	mu    sync.Mutex
	lat   []time.Duration
}

// BenchmarkWatchLatency measures the time from the start of a write to its
// arrival on each watcher (etcd commit + watch + cache + dispatch), with 1
// and 1,000 watchers, and reports p50/p99 in milliseconds. Each op is one
// update that every watcher must receive before the next starts.
func BenchmarkWatchLatency(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", n), func(b *testing.B) {
			e := newEnv(b)
			e.create("ns", "p", "", nil)
			if _, _, err := e.c.List(context.Background(), cacher.ListOptions{Consistent: true}); err != nil {
				b.Fatal(err)
			}
			var cur atomic.Pointer[round]
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range n {
				w, err := e.c.Watch(ctx, cacher.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false)})
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					for range w.Events() {
						r := cur.Load()
						d := time.Since(r.start)
						r.mu.Lock()
						r.lat = append(r.lat, d)
						r.mu.Unlock()
						r.wg.Done()
					}
				}()
			}
			var all []time.Duration
			b.ResetTimer()
			for i := range b.N {
				r := &round{lat: make([]time.Duration, 0, n)}
				r.wg.Add(n)
				r.start = time.Now()
				cur.Store(r)
				if _, err := e.store.Update(context.Background(), key("ns", "p"), obj("ns", "p", fmt.Sprint("n", i), nil), 0); err != nil {
					b.Fatal(err)
				}
				r.wg.Wait()
				all = append(all, r.lat...)
			}
			b.StopTimer()
			slices.Sort(all)
			b.ReportMetric(ms(all[len(all)/2]), "p50-ms")
			b.ReportMetric(ms(all[len(all)*99/100]), "p99-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkList10k measures LIST latency of 10,000 objects from the cache:
// all of them, one namespace of 1,000, and a label selector over all.
func BenchmarkList10k(b *testing.B) {
	e := newEnv(b)
	const total, perNS = 10000, 1000
	var wg sync.WaitGroup
	work := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range work {
				ns := fmt.Sprint("ns", i/perNS)
				labels := map[string]string{"app": fmt.Sprint("a", i%10)}
				if _, err := e.store.Create(context.Background(), key(ns, fmt.Sprint("p", i)), obj(ns, fmt.Sprint("p", i), "node-1", labels)); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range total {
		work <- i
	}
	close(work)
	wg.Wait()
	ctx := context.Background()
	if objs, _, err := e.c.List(ctx, cacher.ListOptions{Consistent: true}); err != nil || len(objs) != total {
		b.Fatalf("list: %d objects, %v", len(objs), err)
	}
	tests := []struct {
		name string
		opts cacher.ListOptions
		want int
	}{
		{"all/rv=0", cacher.ListOptions{ResourceVersion: "0"}, total},
		{"all/consistent", cacher.ListOptions{Consistent: true}, total},
		{"namespace/rv=0", cacher.ListOptions{ResourceVersion: "0", Namespace: "ns3"}, perNS},
		{"label/rv=0", cacher.ListOptions{ResourceVersion: "0", Predicate: cacher.Predicate{Label: labelIs("app", "a3")}}, total / 10},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			for range b.N {
				objs, _, err := e.c.List(ctx, tt.opts)
				if err != nil || len(objs) != tt.want {
					b.Fatalf("%d objects, %v; want %d", len(objs), err, tt.want)
				}
			}
		})
	}
}
