package app

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestEtcdCheckUnreachable points the etcd check at an address nobody
// answers on: the probe fails once its timeout passes, a check asked
// after half the timeout probes again (TestEtcdCheckSharesProbe has the
// checks asked in between), and one after shutdown fails at once.
func TestEtcdCheckUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + addr}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const timeout = 400 * time.Millisecond
	e := newEtcdCheck(c, "/registry", timeout, make(chan struct{}))
	begin := time.Now()
	err1 := e.Check(context.Background())
	if took := time.Since(begin); err1 == nil || took < timeout-50*time.Millisecond || took > 25*timeout {
		t.Fatalf("first probe: %v after %v, want an error after about %v", err1, took, timeout)
	}
	// The probe took its whole timeout, more than timeout/2: the next
	// check probes again.
	begin = time.Now()
	if err := e.Check(context.Background()); err == nil || time.Since(begin) < timeout/2 {
		t.Fatalf("second probe: %v after %v", err, time.Since(begin))
	}
	// Checks during a probe: TestEtcdCheckSharesProbe.
	closed := make(chan struct{})
	close(closed)
	if err := newEtcdCheck(c, "/registry", timeout, closed).Check(context.Background()); err == nil || err.Error() != "server is shutting down" {
		t.Fatalf("check after shutdown: %v", err)
	}
}

// TestEtcdCheckSharesProbe replaces the probe with one that blocks until
// the test lets it go: checks asked while it is in flight, and after it
// within half the timeout, get the last result without a probe of their
// own; the probe's context carries the timeout.
func TestEtcdCheckSharesProbe(t *testing.T) {
	const timeout = time.Hour // no second probe within the test
	e := newEtcdCheck(nil, "/registry", timeout, make(chan struct{}))
	started := make(chan struct{}, 10)
	release := make(chan error)
	var deadline time.Time
	e.probe = func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		started <- struct{}{}
		return <-release
	}
	check := func() error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- e.Check(context.Background()) }()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("a check blocked: it sent a probe of its own")
			return nil
		}
	}

	first := make(chan error, 1)
	begin := time.Now()
	go func() { first <- e.Check(context.Background()) }()
	<-started
	if d := deadline.Sub(begin); d < timeout-time.Minute || d > timeout+time.Minute {
		t.Errorf("probe deadline %v after the check, want about %v", d, timeout)
	}
	// In flight: the result before any probe.
	if err := check(); err == nil || err.Error() != "etcd client connection not yet established" {
		t.Fatalf("check during the first probe: %v", err)
	}
	unreachable := errors.New("context deadline exceeded")
	release <- unreachable
	if err := <-first; err == nil || !errors.Is(err, unreachable) || err.Error() != "error getting data from etcd: context deadline exceeded" {
		t.Fatalf("first probe: %v", err)
	}
	// After it: its error, without a probe.
	for range 3 {
		if err := check(); !errors.Is(err, unreachable) {
			t.Fatalf("check after the probe: %v, want its error", err)
		}
	}
	if n := len(started); n != 0 {
		t.Fatalf("%d more probes sent", n)
	}
}
