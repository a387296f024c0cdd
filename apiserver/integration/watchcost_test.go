package integration

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// goroutineGroups counts the goroutines whose stacks hold a frame of the
// apiserver's serving side (its HTTP server and handlers, the watch cache),
// by the frame that names what they are; the test's own client goroutines
// are left out. (It reads runtime.Stack: the goroutine profile of Go 1.26
// leaves some goroutines out.)
func goroutineGroups(t *testing.T) map[string]int {
	t.Helper()
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	out := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		var frames []string
		for i, line := range strings.Split(g, "\n") {
			if i == 0 || line == "" || line[0] == '\t' || strings.HasPrefix(line, "created by") {
				continue
			}
			frames = append(frames, line)
		}
		if what := serverSide(frames); what != "" {
			out[what]++
		}
	}
	return out
}

// serverSide names a stack of the apiserver's serving side, "" otherwise.
func serverSide(frames []string) string {
	for _, f := range frames {
		if strings.Contains(f, "internal/client.") || strings.Contains(f, "persistConn") || strings.Contains(f, "http2ClientConn") ||
			strings.Contains(f, "http2clientConnReadLoop") || strings.Contains(f, "testing.") {
			return ""
		}
	}
	for _, f := range frames {
		switch {
		case strings.Contains(f, "apiserver/server.(*Server).watch"):
			return "watch handler"
		case strings.Contains(f, "apiserver/cacher."):
			return f[strings.LastIndex(f, "/")+1 : strings.LastIndex(f, "(")]
		case strings.Contains(f, "http2serverConn") || strings.Contains(f, "(*conn).serve") || strings.Contains(f, "backgroundRead") ||
			strings.Contains(f, "http2(*serverConn)"):
			return "net/http server: " + f[strings.LastIndex(f, "/")+1:strings.LastIndex(f, "(")]
		}
	}
	return ""
}

// TestWatchCostOverHTTP opens N watches of pods, each selecting one node
// by spec.nodeName (N kubelets), through the apiserver's HTTP/2 handler,
// and reports the serving goroutines and memory per watch and the time
// for a pod creation to reach its node's watch. It checks that an idle
// watch costs the apiserver about its handler goroutine only (Kubernetes:
// the handler and the cacheWatcher's), and that each watch gets its
// node's pods only.
func TestWatchCostOverHTTP(t *testing.T) {
	const n = 5000
	s := apiservertest.Start(t, apiservertest.WithTLS)
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // 5,000 watches open at once, not at 50 a second
	admin, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := client.Resource[api.Pod](admin)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	before := goroutineGroups(t)
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	began := time.Now()
	ws := make([]client.Watcher[api.Pod], n)
	for i := range ws {
		w, err := pods.Watch(ctx, client.ListOptions{FieldSelector: fmt.Sprint("spec.nodeName=node-", i), AllowWatchBookmarks: true, ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	// Each watch is served once its handler has registered it: a pod
	// written now reaches every watch whose node it names.
	probe := func(i int, name string) {
		t.Helper()
		p := &api.Pod{}
		p.Name, p.Namespace = name, "default"
		p.Spec.NodeName = fmt.Sprint("node-", i)
		p.Spec.Containers = []api.Container{{Name: "c", Image: "busybox"}}
		if _, err := client.Resource[api.Pod](admin).Namespace("default").Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(i int, name string) time.Duration {
		t.Helper()
		start := time.Now()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev, ok := <-ws[i].ResultChan():
				if !ok {
					t.Fatalf("watch %d closed", i)
				}
				if ev.Type == api.Bookmark {
					continue
				}
				if ev.Object == nil || ev.Object.Name != name {
					t.Fatalf("watch of node-%d: %s %v, want ADDED %s", i, ev.Type, ev.Object, name)
				}
				return time.Since(start)
			case <-timeout:
				t.Fatalf("watch of node-%d: no event for %s", i, name)
			}
		}
	}
	probe(n-1, "last")
	expect(n-1, "last")
	opened := time.Since(began)
	after := goroutineGroups(t)
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)

	total := 0
	var kinds []string
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			total += d
			kinds = append(kinds, fmt.Sprintf("%s: %+.2f", k, float64(d)/n))
		}
	}
	sort.Strings(kinds)
	perWatch := float64(total) / n
	t.Logf("%d watches over HTTP/2 opened in %v: %.2f serving goroutines per watch (%s); %d bytes of heap and stacks per watch (server and client)",
		n, opened.Round(time.Millisecond), perWatch, strings.Join(kinds, "; "),
		(int64(m1.HeapInuse+m1.StackInuse)-int64(m0.HeapInuse+m0.StackInuse))/n)
	if perWatch > 1.5 {
		t.Errorf("%.2f serving goroutines per idle watch; want about 1 (its handler)", perWatch)
	}

	// Dispatch: an update of a pod of node-0 reaches node-0's watch and no
	// other (a stray event would show up at the next expect of that watch).
	probe(0, "first")
	d := expect(0, "first")
	for i := range 20 {
		name := fmt.Sprint("p", i)
		probe(i%7, name)
		d += expect(i%7, name)
	}
	t.Logf("create-to-watch latency with %d node-selected watches: %v on average", n, d/21)
	for _, w := range ws {
		w.Stop()
	}
}
