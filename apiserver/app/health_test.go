package app

import (
	"context"
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestEtcdCheckUnreachable points the etcd check at an address nobody
// answers on: the probe fails once its timeout passes, a check asked
// within half the timeout gets that error at once without a probe, and
// the next probe goes out after it.
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
	if took := time.Since(begin); err1 == nil || took < timeout-50*time.Millisecond || took > 5*timeout {
		t.Fatalf("first probe: %v after %v, want an error after about %v", err1, took, timeout)
	}
	// The probe took its whole timeout, more than timeout/2: the next
	// check probes again.
	begin = time.Now()
	if err := e.Check(context.Background()); err == nil || time.Since(begin) < timeout/2 {
		t.Fatalf("second probe: %v after %v", err, time.Since(begin))
	}
	// Checks while a probe is in flight get the last result at once.
	done := make(chan error)
	go func() { done <- e.Check(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	begin = time.Now()
	if err := e.Check(context.Background()); err == nil || time.Since(begin) > 50*time.Millisecond {
		t.Fatalf("check during a probe: %v after %v, want the last error at once", err, time.Since(begin))
	}
	if err := <-done; err == nil {
		t.Fatal("third probe succeeded")
	}
	closed := make(chan struct{})
	close(closed)
	if err := newEtcdCheck(c, "/registry", timeout, closed).Check(context.Background()); err == nil || err.Error() != "server is shutting down" {
		t.Fatalf("check after shutdown: %v", err)
	}
}
