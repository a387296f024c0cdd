package framework

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
)

// DefaultParallelism is kube-scheduler's default number of goroutines for
// filtering and scoring.
const DefaultParallelism = 16

// Parallelizer runs a function over pieces with a fixed number of workers.
type Parallelizer struct {
	Workers int
}

// chunkSize is kube's chunkSizeFor: about sqrt(n) pieces per grab, at most
// n/workers+1, so workers take few locks but the load still balances.
func chunkSize(n, workers int) int {
	s := int(math.Sqrt(float64(n)))
	if r := n/workers + 1; s > r {
		s = r
	}
	return max(s, 1)
}

// Until calls fn(i) for i in [0, pieces) from up to Workers goroutines,
// returning when all calls returned or, early, after ctx ends (the pieces
// not started are skipped).
func (p Parallelizer) Until(ctx context.Context, pieces int, fn func(i int)) {
	if pieces == 0 {
		return
	}
	workers := max(p.Workers, 1)
	chunk := chunkSize(pieces, workers)
	workers = min(workers, (pieces+chunk-1)/chunk)
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			start := int(next.Add(int64(chunk))) - chunk
			if start >= pieces {
				return
			}
			end := min(start+chunk, pieces)
			for i := start; i < end && ctx.Err() == nil; i++ {
				fn(i)
			}
		}
	}
	if workers == 1 {
		work()
		return
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
