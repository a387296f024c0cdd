package controller

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestWithSyncMetrics checks that the controller comes back recording its
// syncs, and that registering twice with one registry (two controllers of
// one manager) is not an error.
func TestWithSyncMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	for _, name := range []string{"first", "second"} {
		l := NewLoop(LoopConfig[string]{})
		got, err := WithSyncMetrics(l, reg, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != Interface(l) {
			t.Fatalf("%s: got %v, want the loop given", name, got)
		}
		if l.cfg.Metrics == nil {
			t.Fatalf("%s: the loop records no metrics", name)
		}
	}
}
