package cacher_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// proxy is a TCP forwarder that can cut its connections, to take etcd away
// from one client while others keep using it.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target}
	t.Cleanup(func() { l.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestResyncAfterCompactedWatch takes etcd away from the cacher, changes
// and compacts etcd meanwhile, and gives it back: the cacher's resumed
// watch is compacted, so it must re-list, terminate its watchers, and
// serve the new state.
func TestResyncAfterCompactedWatch(t *testing.T) {
	t.Parallel()
	b := etcdtest.Start(t)
	direct := storage.New(b.Client(), "/registry")
	ep := b.Endpoints()[0]
	p := newProxy(t, ep[len("http://"):])
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + p.l.Addr().String()}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	e := &env{t: t, store: storage.New(cli, "/registry"), cli: cli,
		cfg: cacher.Config{Prefix: "pods/", Decode: decode, Bookmark: bookmark, Logger: etcdtest.Logger()}}
	e.c = e.start()
	before := e.create("ns", "a", "", nil)
	w := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(before, 10)})
	rev := e.create("ns", "b", "", nil)
	if ev := next(t, w, false); ev.Type != "ADDED" || ev.rv() != rev {
		t.Fatalf("got %v, want ADDED ns/b", ev)
	}

	p.cut()
	ctx := t.Context()
	if _, _, err := direct.Delete(ctx, key("ns", "a"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Create(ctx, key("ns", "c"), obj("ns", "c", "", nil)); err != nil {
		t.Fatal(err)
	}
	cur, err := direct.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client().Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	p.restore()

	// The old watcher is terminated rather than fed a diff.
	expectClosed(t, w)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		if err := e.c.WaitReady(wctx); err != nil {
			t.Fatal(err)
		}
		if e.c.Revision() >= cur {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	objs, _, err := e.c.List(ctx, cacher.ListOptions{ResourceVersion: "0"})
	if err != nil || names(objs) != "ns/b,ns/c" {
		t.Fatalf("after resync: %s %v, want ns/b,ns/c", names(objs), err)
	}
	// A client resuming from before the compaction learns it must re-list.
	old := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(before, 10)})
	if ev := next(t, old, true); ev.Type != "ERROR" || ev.Object.Code != 410 {
		t.Fatalf("resume from %d after compaction: %v, want ERROR 410", before, ev)
	}
	if v := metricValue(t, e.c, "apiserver_watch_cache_initializations_total", "", ""); v < 2 {
		t.Fatalf("initializations = %v, want a re-list", v)
	}
}
