package storage_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkTxn measures etcd transactions per second through clientv3
// against an embedded etcd: each op is one Update (a compare-and-put
// transaction) of a key of its own, serially and from 64 goroutines.
func BenchmarkTxn(b *testing.B) {
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			s, _ := newStore(b)
			ctx := context.Background()
			revs := make([]int64, conc)
			for i := range conc {
				revs[i] = mustCreate(b, s, fmt.Sprintf("bench/k%d", i), "v")
			}
			value := []byte(`{"kind":"Lease","spec":{"holderIdentity":"node-1"}}`)
			var next atomic.Int64
			b.ResetTimer()
			start := time.Now()
			if conc == 1 {
				for range b.N {
					r, err := s.Update(ctx, "bench/k0", value, revs[0])
					if err != nil {
						b.Fatal(err)
					}
					revs[0] = r
				}
			} else {
				b.SetParallelism(max(1, conc/runtime.GOMAXPROCS(0))) // conc goroutines in all
				b.RunParallel(func(pb *testing.PB) {
					i := int(next.Add(1)-1) % conc
					key := fmt.Sprintf("bench/k%d", i)
					rev := revs[i]
					for pb.Next() {
						r, err := s.Update(ctx, key, value, rev)
						if err != nil {
							b.Error(err)
							return
						}
						rev = r
					}
				})
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "txn/s")
		})
	}
}
