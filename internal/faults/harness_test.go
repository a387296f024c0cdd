package faults_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
)

// module is the import path prefix of the binaries the suite builds.
const module = "github.com/minik8s/minik8s/"

// setUp skips the test with -short, builds the binary of component
// ("apiserver", "scheduler", ...) and returns its path and a context that
// bounds the whole test.
func setUp(t *testing.T, component string, timeout time.Duration) (string, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault test: builds and runs real binaries (skipped with -short)")
	}
	t.Setenv("KUBECONFIG", "")
	bin := daemontest.Build(t, module+component)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return bin, ctx
}

// newClient is an unthrottled admin client of the test itself.
func newClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: url, QPS: -1, Timeout: 15 * time.Second, UserAgent: "faults-test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond every interval until it holds; the test fails when
// ctx ends first, with what and cond's last error.
func eventually(ctx context.Context, t *testing.T, interval time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s: %v (last error: %v)", what, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// exitedEarly fails the test if p ended by itself: a daemon that dies on
// its own in the middle of a fault test would otherwise look like a hang.
func exitedEarly(t *testing.T, p *daemontest.Process, name string) {
	t.Helper()
	select {
	case <-p.Done():
		t.Fatalf("%s exited by itself (%s)", name, p.ExitStatus())
	default:
	}
}

func createNamespace(ctx context.Context, t *testing.T, c *client.Client, name string) {
	t.Helper()
	if _, err := client.Resource[api.Namespace](c).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// frontend is a TCP forwarder on a loopback port the kernel picked, held
// for the whole test: the one address clients use for an apiserver that
// restarts, maybe on another port, as a load balancer in front of
// kube-apiserver would be. A connection accepted while the backend is down
// is closed at once; one whose backend dies is closed with it.
type frontend struct {
	l       net.Listener
	backend atomic.Pointer[string]
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
}

func startFrontend(t *testing.T) *frontend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &frontend{l: l, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	t.Cleanup(f.close)
	return f
}

// URL is the clients' address of the apiserver.
func (f *frontend) URL() string { return "http://" + f.l.Addr().String() }

// SetBackend points new connections at addr ("127.0.0.1:PORT").
func (f *frontend) SetBackend(addr string) { f.backend.Store(&addr) }

func (f *frontend) serve() {
	defer f.wg.Done()
	for {
		in, err := f.l.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.forward(in)
		}()
	}
}

func (f *frontend) forward(in net.Conn) {
	defer in.Close()
	addr := f.backend.Load()
	if addr == nil {
		return
	}
	out, err := net.DialTimeout("tcp", *addr, time.Second)
	if err != nil {
		return
	}
	defer out.Close()
	if !f.track(in, out) {
		return
	}
	defer f.untrack(in, out)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done // either side ending ends both
	in.Close()
	out.Close()
	<-done
}

func (f *frontend) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *frontend) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.conns, c)
	}
}

func (f *frontend) close() {
	_ = f.l.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// errorOf is a short form of err for counting failures by kind: the
// Status of an answered request, else the innermost transport error.
func errorOf(err error) string {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return fmt.Sprintf("%d %s", se.Status().Code, se.Status().Reason)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "connection closed"
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}
