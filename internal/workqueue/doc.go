// Package workqueue provides the work queues controllers drain, with the
// semantics of client-go's workqueue, generic over comparable keys:
//
//   - an item is handed to at most one worker at a time;
//   - adding an item that is waiting collapses into the waiting one;
//   - adding an item that is being processed marks it dirty, and it is queued
//     again when the worker calls Done;
//   - AddAfter delays an add; AddRateLimited delays it by the queue's
//     RateLimiter (per-item exponential back-off and an overall token bucket
//     by default), Forget resets an item's back-off.
//
// The canonical worker loop:
//
//	key, shutdown := q.Get()
//	if shutdown { return false }
//	defer q.Done(key)
//	if err := sync(ctx, key); err != nil { q.AddRateLimited(key); return true }
//	q.Forget(key)
//
// Named queues (WithName) record Prometheus metrics labelled name=NAME:
// workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds and workqueue_retries_total,
// registered with RegisterMetrics.
package workqueue
