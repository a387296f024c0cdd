package nodelifecycle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// BenchmarkMonitorPass measures one health pass over 5,000 healthy nodes
// within their grace period, the work the controller does every
// --node-monitor-period.
func BenchmarkMonitorPass(b *testing.B) {
	const n = 5000
	objs := make([]api.Object, 0, 2*n)
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		objs = append(objs, readyNode(name, api.ConditionTrue, t0), lease(name, t0))
	}
	fx := newFixture(b, objs...)
	ctx := context.Background()
	for fx.c.nodes.Store().Len() < n || fx.c.leases.Store().Len() < n {
		time.Sleep(time.Millisecond)
	}
	fx.now = t0.Add(time.Second) // within the grace period however long it runs
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := fx.c.monitorNodeHealth(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if w := fx.writes(); len(w) != 0 {
		b.Fatalf("healthy nodes written: %d writes", len(w))
	}
}
