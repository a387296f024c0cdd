package controller

import (
	"context"
	"log/slog"
	"sync"

	"github.com/minik8s/minik8s/internal/workqueue"
)

// RunWorkers drains q with workers goroutines calling sync for each key, in
// sample-controller's loop: a failed key is re-added rate-limited, a
// successful one forgotten. It returns after ctx ends, the queue is shut
// down and every worker has returned.
func RunWorkers[K comparable](ctx context.Context, q *workqueue.RateLimitingQueue[K], workers int, log *slog.Logger, syncKey func(context.Context, K) error) {
	if workers < 1 {
		workers = 1
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for processNext(ctx, q, log, syncKey) {
			}
		}()
	}
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
}

func processNext[K comparable](ctx context.Context, q *workqueue.RateLimitingQueue[K], log *slog.Logger, syncKey func(context.Context, K) error) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if err := syncKey(ctx, key); err != nil {
		if ctx.Err() == nil {
			log.Warn("sync failed, requeuing", "key", key, "err", err, "retries", q.NumRequeues(key))
		}
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}
