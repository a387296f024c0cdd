package faults_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/internal/informer"
)

// apiserverProcess is the apiserver binary with its embedded etcd in a data
// dir, serving plain HTTP on a loopback port.
type apiserverProcess struct {
	*daemontest.Process
	addr string
}

// startAPIServer runs bin on dataDir, serving plain HTTP on the test's
// listener l (inherited: the test holds the port across restarts, so no
// other process can take it), and waits until it is ready.
func startAPIServer(ctx context.Context, t *testing.T, bin, dataDir string, l *net.TCPListener) *apiserverProcess {
	t.Helper()
	p := daemontest.StartInheriting(t, bin, []*net.TCPListener{l}, "--secure-port=0", "--insecure-bind-address=127.0.0.1",
		"--insecure-port", daemontest.Port(l), "--data-dir", dataDir, "--cert-dir", filepath.Join(dataDir, "pki"), "--log-level", "info")
	s := &apiserverProcess{Process: p, addr: l.Addr().String()}
	if err := s.waitReady(ctx); err != nil {
		t.Fatalf("apiserver did not become ready: %v", err)
	}
	return s
}

// waitReady polls /readyz until it answers 200, the process exits or ctx ends.
func (s *apiserverProcess) waitReady(ctx context.Context) error {
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + s.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.Done():
			return fmt.Errorf("exited: %s", s.ExitStatus())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ack is a create the apiserver answered 201 to.
type ack struct {
	name    string
	rv      int64
	writer  int
	started time.Time // when the request was sent
}

// writers create ConfigMaps as fast as the apiserver takes them, each
// writer one at a time, and record every acknowledged create and every
// failure. A failed create is not retried under the same name: whether it
// was stored is what the final list tells.
type writers struct {
	mu       sync.Mutex
	acks     []ack
	attempts int
	failures map[string]int
	errs     map[string]string // name -> error of a failed create
	// answered are the failures the apiserver answered (a Status), not
	// broken connections: a server being killed answers nothing, so any is
	// a fault of a server that was up.
	answered []string
}

func runWriters(ctx context.Context, c *client.Client, ns string, n int) (*writers, func()) {
	w := &writers{failures: map[string]int{}, errs: map[string]string{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cms := client.Resource[api.ConfigMap](c).Namespace(ns)
			// Stopping waits for the answer to the create in flight, so
			// none can land after the final list.
			for seq := 0; !stop.Load() && ctx.Err() == nil; seq++ {
				name := fmt.Sprintf("w%d-%06d", i, seq)
				started := time.Now()
				got, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name}, Data: map[string]string{"seq": strconv.Itoa(seq)}})
				w.mu.Lock()
				w.attempts++
				if err == nil {
					rv, _ := strconv.ParseInt(got.ResourceVersion, 10, 64)
					w.acks = append(w.acks, ack{name: name, rv: rv, writer: i, started: started})
				} else {
					w.failures[errorOf(err)]++
					w.errs[name] = err.Error()
					var se *apierrors.StatusError
					if errors.As(err, &se) {
						w.answered = append(w.answered, fmt.Sprintf("%s: %v", name, err))
					}
				}
				w.mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	return w, func() { stop.Store(true); wg.Wait() }
}

// outcome says what the writer of name was told.
func (w *writers) outcome(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.acks {
		if a.name == name {
			return fmt.Sprintf("acknowledged at resourceVersion %d", a.rv)
		}
	}
	if e, ok := w.errs[name]; ok {
		return "answered with an error: " + e
	}
	return "never answered"
}

func (w *writers) snapshot() []ack {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acks)
}

// ackedSince counts the acknowledged creates sent at or after t.
func (w *writers) ackedSince(t time.Time) int {
	n := 0
	for _, a := range w.snapshot() {
		if !a.started.Before(t) {
			n++
		}
	}
	return n
}

// rawWatch follows one resource with the bare watch API, as a client that
// keeps its place would: it starts at a resourceVersion, and whenever the
// stream ends it watches again from the last resourceVersion it saw; after
// a 410 it lists and watches from the list. It records what a gap or a
// duplicate would look like: an event whose resourceVersion is not above
// the previous one, or an object ADDED twice.
type rawWatch struct {
	mu         sync.Mutex
	lastRV     int64
	seen       map[string]int64 // name -> resourceVersion of its ADDED
	events     int
	resumes    int // watches opened again from the last resourceVersion after a stream ended
	expired    int // 410s answered by a relist
	violations []string
}

func startRawWatch(ctx context.Context, t *testing.T, c *client.Client, ns string, fromRV int64) *rawWatch {
	w := &rawWatch{lastRV: fromRV, seen: map[string]int64{}}
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for opened := 0; ctx.Err() == nil; {
			w.mu.Lock()
			from := w.lastRV
			w.mu.Unlock()
			wi, err := cms.Watch(ctx, client.ListOptions{ResourceVersion: strconv.FormatInt(from, 10)})
			if err != nil {
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					w.relist(ctx, cms)
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if opened++; opened > 1 {
				w.mu.Lock()
				w.resumes++
				w.mu.Unlock()
			}
			for ev := range wi.ResultChan() {
				if ev.Type == api.Error {
					if ev.Status != nil && ev.Status.Code == http.StatusGone {
						w.relist(ctx, cms)
					}
					break
				}
				w.apply(ev)
			}
			wi.Stop()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *rawWatch) apply(ev client.Event[api.ConfigMap]) {
	rv, _ := strconv.ParseInt(ev.Object.ResourceVersion, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Type == api.Bookmark {
		if rv > w.lastRV {
			w.lastRV = rv
		}
		return
	}
	w.events++
	if rv <= w.lastRV {
		w.violate("%s %s at resourceVersion %d after %d (a duplicate or out of order)", ev.Type, ev.Object.Name, rv, w.lastRV)
	}
	w.lastRV = max(w.lastRV, rv)
	switch ev.Type {
	case api.Added:
		if prev, dup := w.seen[ev.Object.Name]; dup {
			w.violate("%s ADDED twice, at resourceVersions %d and %d", ev.Object.Name, prev, rv)
		}
		w.seen[ev.Object.Name] = rv
	default:
		w.violate("unexpected %s of %s (nothing updates or deletes)", ev.Type, ev.Object.Name)
	}
}

func (w *rawWatch) relist(ctx context.Context, cms *client.ResourceClient[api.ConfigMap, *api.ConfigMap]) {
	l, err := cms.List(ctx, client.ListOptions{})
	if err != nil {
		return // the next watch fails again and comes back here
	}
	rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expired++
	w.seen = map[string]int64{}
	for _, cm := range l.Items {
		r, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		w.seen[cm.Name] = r
	}
	w.lastRV = rv
}

func (w *rawWatch) violate(format string, args ...any) {
	if len(w.violations) < 10 {
		w.violations = append(w.violations, fmt.Sprintf(format, args...))
	}
}

func (w *rawWatch) position() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastRV
}

// TestAPIServerKill9UnderWrites SIGKILLs the apiserver (embedded etcd
// included) twice while 8 clients create ConfigMaps as fast as they can,
// restarts it on the same data dir each time, and checks that
//   - every create answered 201 is stored, at its resourceVersion or a newer one;
//   - the resourceVersions of creates sent after a kill are all above every
//     one acknowledged before it, and each writer's keep rising;
//   - a bare watch started before the first write, resuming from its last
//     resourceVersion after each kill, sees every object exactly once, in
//     resourceVersion order (or relists on 410); an informer ends with
//     exactly the stored objects.
func TestAPIServerKill9UnderWrites(t *testing.T) {
	const (
		kills         = 2
		writerCount   = 8
		writesPerLeg  = 300 // acknowledged creates before each kill and after the last restart
		namespaceName = "faults"
	)
	bin, ctx := setUp(t, "apiserver", 4*time.Minute)
	dataDir := t.TempDir()
	l := daemontest.Listen(t)
	srv := startAPIServer(ctx, t, bin, dataDir, l)
	fe := startFrontend(t)
	fe.SetBackend(srv.addr)
	c := newClient(t, fe.URL())
	createNamespace(ctx, t, c, namespaceName)
	cms := client.Resource[api.ConfigMap](c).Namespace(namespaceName)
	initial, err := cms.List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	startRV, _ := strconv.ParseInt(initial.ResourceVersion, 10, 64)

	raw := startRawWatch(ctx, t, c, namespaceName, startRV)
	inf := informer.New[api.ConfigMap](informer.For[api.ConfigMap](c, namespaceName, client.ListOptions{}), informer.Options[api.ConfigMap]{Logger: apiservertest.Logger()})
	infCtx, stopInformer := context.WithCancel(ctx)
	infDone := make(chan struct{})
	go func() { defer close(infDone); inf.Run(infCtx) }()
	t.Cleanup(func() { stopInformer(); <-infDone })
	eventually(ctx, t, 20*time.Millisecond, "informer synced", func() (bool, error) { return inf.HasSynced(), nil })

	wr, stopWriters := runWriters(ctx, c, namespaceName, writerCount)
	defer stopWriters()
	legStart := time.Now()
	type killFigures struct {
		ackedBefore             int
		maxRVBefore, minRVAfter int64
		watchedBefore           int64 // the bare watch's position when the old process was gone
		ready, firstAck         time.Duration
	}
	var figures []killFigures
	var killTimes []time.Time
	for k := range kills {
		eventually(ctx, t, 10*time.Millisecond, fmt.Sprintf("%d creates before kill %d", writesPerLeg, k+1), func() (bool, error) {
			return wr.ackedSince(legStart) >= writesPerLeg, nil
		})
		exitedEarly(t, srv.Process, "apiserver")
		killedAt := srv.Kill9(t)
		watchedBefore := raw.position()
		killTimes = append(killTimes, killedAt)
		fe.SetBackend("127.0.0.1:1") // nothing listens there: connections fail until the restart
		srv = startAPIServer(ctx, t, bin, dataDir, l)
		fe.SetBackend(srv.addr)
		ready := time.Since(killedAt)
		legStart = time.Now()
		eventually(ctx, t, 5*time.Millisecond, "a create acknowledged after the restart", func() (bool, error) {
			return wr.ackedSince(killedAt) > 0, nil
		})
		f := killFigures{ready: ready, firstAck: time.Since(killedAt), watchedBefore: watchedBefore}
		for _, a := range wr.snapshot() {
			if a.started.Before(killedAt) {
				f.ackedBefore++
				f.maxRVBefore = max(f.maxRVBefore, a.rv)
			}
		}
		figures = append(figures, f)
	}
	eventually(ctx, t, 10*time.Millisecond, fmt.Sprintf("%d creates after the last restart", writesPerLeg), func() (bool, error) {
		return wr.ackedSince(legStart) >= writesPerLeg, nil
	})
	stopWriters()
	stopped := time.Now()

	// What is stored, read from etcd through the restarted server (a paged
	// list is not served by the watch cache), and what its watch cache
	// lists: the two must agree.
	stored, finalRV := listNames(ctx, t, cms, 1<<20)
	cached, cachedRV := listNames(ctx, t, cms, 0)
	if d := diffNames(stored, cached); d != "" || cachedRV < finalRV {
		t.Errorf("the watch cache's list (at resourceVersion %d) differs from etcd's (at %d): %s", cachedRV, finalRV, d)
	}
	acks := wr.snapshot()

	// 1. No acknowledged write lost.
	lost, newer := 0, 0
	acked := map[string]bool{}
	for _, a := range acks {
		acked[a.name] = true
		switch rv, ok := stored[a.name]; {
		case !ok:
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged create of %s (resourceVersion %d) is not stored", a.name, a.rv)
			}
		case rv < a.rv:
			t.Errorf("%s is stored at resourceVersion %d, older than the %d its create was acknowledged with", a.name, rv, a.rv)
		case rv > a.rv:
			newer++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost", lost, len(acks))
	}
	if finalRV < acks[len(acks)-1].rv {
		t.Errorf("list resourceVersion %d is below an acknowledged write's %d", finalRV, acks[len(acks)-1].rv)
	}
	unacked := 0
	for name := range stored {
		if !acked[name] {
			unacked++ // its create failed on the client's side but was committed
		}
	}

	// 2. resourceVersions keep rising: per writer, across the kills, and
	// no two writes share one.
	byWriter := map[int][]ack{}
	rvOwner := map[int64]string{}
	for _, a := range acks {
		byWriter[a.writer] = append(byWriter[a.writer], a)
		if other, dup := rvOwner[a.rv]; dup {
			t.Errorf("resourceVersion %d acknowledged for both %s and %s", a.rv, other, a.name)
		}
		rvOwner[a.rv] = a.name
	}
	for i, as := range byWriter {
		for j := 1; j < len(as); j++ {
			if as[j].rv <= as[j-1].rv {
				t.Errorf("writer %d: %s got resourceVersion %d after %s got %d", i, as[j].name, as[j].rv, as[j-1].name, as[j-1].rv)
				break
			}
		}
	}
	for k, killedAt := range killTimes {
		f := &figures[k]
		f.minRVAfter = -1
		for _, a := range acks {
			if !a.started.Before(killedAt) && (f.minRVAfter < 0 || a.rv < f.minRVAfter) {
				f.minRVAfter = a.rv
			}
		}
		if f.minRVAfter <= max(f.maxRVBefore, f.watchedBefore) {
			t.Errorf("kill %d: a create sent after the kill got resourceVersion %d, not above the %d acknowledged or the %d watched before it",
				k+1, f.minRVAfter, f.maxRVBefore, f.watchedBefore)
		}
	}

	// 3. Watchers resume: the bare watch reaches the final list's
	// resourceVersion and saw exactly the stored objects; so does the
	// informer.
	catchUp, cancelCatchUp := context.WithTimeout(ctx, time.Minute)
	defer cancelCatchUp()
	eventually(catchUp, t, 20*time.Millisecond, "the bare watch to reach the final resourceVersion", func() (bool, error) {
		return raw.position() >= finalRV, nil
	})
	rawCaughtUp := time.Since(stopped)
	raw.mu.Lock()
	for _, v := range raw.violations {
		t.Errorf("bare watch: %s", v)
	}
	var missing, extra []string
	for name := range stored {
		if _, ok := raw.seen[name]; !ok {
			missing = append(missing, name)
		}
	}
	for name := range raw.seen {
		if _, ok := stored[name]; !ok {
			extra = append(extra, name)
		}
	}
	rawEvents, rawResumes, rawExpired, rawSeen := raw.events, raw.resumes, raw.expired, maps.Clone(raw.seen)
	raw.mu.Unlock()
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("bare watch missed %d stored objects (a gap), first: %v", len(missing), missing[:min(5, len(missing))])
	}
	for _, name := range extra[:min(5, len(extra))] {
		t.Errorf("bare watch saw %s ADDED at resourceVersion %d; it is not stored (its create was %s)", name, rawSeen[name], wr.outcome(name))
	}
	if rawResumes < kills {
		t.Errorf("bare watch resumed %d times, want at least one per kill (%d)", rawResumes, kills)
	}
	eventually(catchUp, t, 20*time.Millisecond, "the informer to hold exactly the stored objects", func() (bool, error) {
		keys := inf.Store().ListKeys()
		if len(keys) != len(stored) {
			return false, fmt.Errorf("informer holds %d objects, %d stored", len(keys), len(stored))
		}
		for _, k := range keys {
			_, name, _ := cache.SplitMetaNamespaceKey(k)
			if _, ok := stored[name]; !ok {
				return false, fmt.Errorf("informer holds %s, which is not stored", k)
			}
		}
		return true, nil
	})
	infCaughtUp := time.Since(stopped)

	wr.mu.Lock()
	attempts, failures, answered := wr.attempts, fmt.Sprint(wr.failures), wr.answered
	wr.mu.Unlock()
	if len(answered) > 0 {
		t.Errorf("%d creates were refused by a running apiserver, first: %v", len(answered), answered[:min(5, len(answered))])
	}
	for k, f := range figures {
		t.Logf("kill %d: %d creates acknowledged before it (highest resourceVersion acknowledged %d, watched %d); restarted apiserver ready %v after SIGKILL, first create acknowledged after %v; lowest resourceVersion after it %d",
			k+1, f.ackedBefore, f.maxRVBefore, f.watchedBefore, f.ready.Round(time.Millisecond), f.firstAck.Round(time.Millisecond), f.minRVAfter)
	}
	t.Logf("writes: %d attempted by %d writers, %d acknowledged, %d stored (%d acknowledged lost, %d stored without an acknowledgement, %d at a newer resourceVersion); failures: %s",
		attempts, writerCount, len(acks), len(stored), lost, unacked, newer, failures)
	t.Logf("bare watch from resourceVersion %d: %d events, %d resumes from its last resourceVersion, %d relists after 410, caught up %v after the last write; informer caught up after %v",
		startRV, rawEvents, rawResumes, rawExpired, rawCaughtUp.Round(time.Millisecond), infCaughtUp.Round(time.Millisecond))
}

// listNames lists the ConfigMaps of cms: name -> resourceVersion, and the
// list's resourceVersion. A positive limit pages the list, which the
// apiserver reads from etcd rather than its watch cache.
func listNames(ctx context.Context, t *testing.T, cms *client.ResourceClient[api.ConfigMap, *api.ConfigMap], limit int64) (map[string]int64, int64) {
	t.Helper()
	l, err := cms.List(ctx, client.ListOptions{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, cm := range l.Items {
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		out[cm.Name] = rv
	}
	rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	return out, rv
}

// diffNames describes how b differs from a ("" when equal).
func diffNames(a, b map[string]int64) string {
	var d []string
	for name, rv := range a {
		if rvb, ok := b[name]; !ok {
			d = append(d, fmt.Sprintf("%s@%d missing", name, rv))
		} else if rvb != rv {
			d = append(d, fmt.Sprintf("%s@%d at %d", name, rv, rvb))
		}
	}
	for name, rv := range b {
		if _, ok := a[name]; !ok {
			d = append(d, fmt.Sprintf("%s@%d extra", name, rv))
		}
	}
	sort.Strings(d)
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("and %d more", len(d)-5))
	}
	return strings.Join(d, ", ")
}
