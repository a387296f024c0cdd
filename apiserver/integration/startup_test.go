package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

// TestFailedStartLeavesNothingRunning fails start-up in a late phase (the
// plain-HTTP port on a non-loopback address is refused when the listeners
// are bound, after etcd and the watch caches have started) and checks that
// the phases before it were undone: Wait returns the error at once, and
// etcd's data directory is free for the next server.
func TestFailedStartLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test")
	}
	opts := apiservertest.Options(t.TempDir())
	opts.InsecureBindAddress, opts.InsecurePort = "192.0.2.1", 8080
	a := app.New(opts, nil, apiservertest.Logger())
	err := a.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		a.Stop()
		t.Fatalf("start = %v, want the loopback refusal", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- a.Wait() }()
	select {
	case werr := <-waited:
		if werr != err {
			t.Errorf("Wait = %v, want Start's error %v", werr, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait still blocks after a failed Start")
	}

	// The same data directory: etcd's lock was released.
	opts.InsecurePort = 0
	s := apiservertest.StartWith(t, opts)
	if code := newClient(t, s).do("GET", "/api/v1/namespaces/default", nil, "").Code; code != 200 {
		t.Fatalf("GET default namespace on the restarted server = %d", code)
	}
}
