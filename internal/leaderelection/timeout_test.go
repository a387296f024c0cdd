package leaderelection

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/client"
)

// hangingLeases is fakeLeases behind a server that hangs the next
// `hang` requests until the client gives up on them.
type hangingLeases struct {
	*fakeLeases
	hang atomic.Int32
	hung atomic.Int32
}

func newHangingLeases(t *testing.T) (*hangingLeases, string) {
	h := &hangingLeases{fakeLeases: newFakeLeases(t)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.hang.Add(-1) >= 0 {
			h.hung.Add(1)
			// The server notices the client leaving only once the
			// body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		h.fakeLeases.serve(w, r)
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

func startSlowCandidate(t *testing.T, url string) (*Elector, chan error) {
	t.Helper()
	c, err := client.New(&client.Config{Host: url, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{
		Client: c, Namespace: "kube-system", Name: "sched", Identity: "a",
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
		Logger: quiet,
		Callbacks: Callbacks{
			OnStartedLeading: func(ctx context.Context) { <-ctx.Done() },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return e, done
}

// TestHungRequestDuringAcquire: the apiserver hangs the first request;
// it is given up after RenewDeadline/2 (client-go's resourcelock client
// timeout) and the next try acquires the lease.
func TestHungRequestDuringAcquire(t *testing.T) {
	t.Parallel()
	h, url := newHangingLeases(t)
	h.hang.Store(1)
	e, _ := startSlowCandidate(t, url)
	took := waitFor(t, "the candidate leads after a hung request", 4*time.Second, e.IsLeader)
	if h.hung.Load() != 1 || took < 900*time.Millisecond {
		t.Fatalf("led after %v with %d hung requests; want one request hung for about 1s", took, h.hung.Load())
	}
}

// TestHungRequestDuringRenew: a renewal the apiserver hangs is given up
// after RenewDeadline/2, and the retry within the RenewDeadline keeps the
// lease: the leader does not lose it to one hung request.
func TestHungRequestDuringRenew(t *testing.T) {
	t.Parallel()
	h, url := newHangingLeases(t)
	e, done := startSlowCandidate(t, url)
	waitFor(t, "the candidate leads", 4*time.Second, e.IsLeader)
	l, _ := h.get()
	h.hang.Store(1)
	waitFor(t, "a renewal after the hung one", 4*time.Second, func() bool {
		cur, _ := h.get()
		return h.hung.Load() == 1 && cur.ResourceVersion != l.ResourceVersion
	})
	select {
	case err := <-done:
		t.Fatalf("the leader stopped: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	if !e.IsLeader() {
		t.Fatal("the leader lost the lease to one hung renewal")
	}
}
