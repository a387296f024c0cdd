package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

const cms = "/api/v1/namespaces/default/configmaps"

func TestOptimisticConcurrencyOneWriterWins(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	created := c.must(201, "POST", cms, configMap("cc", nil, map[string]string{"v": "0"}))
	base := rv(created)

	var wg sync.WaitGroup
	codes := make([]int, 2)
	bodies := make([][]byte, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj := configMap("cc", nil, map[string]string{"v": fmt.Sprint(i + 1)})
			meta(obj)["resourceVersion"] = base
			r := c.do("PUT", cms+"/cc", obj, "")
			codes[i], bodies[i] = r.Code, r.Body
		}()
	}
	wg.Wait()
	ok, conflict := 0, 0
	for i, code := range codes {
		switch code {
		case 200:
			ok++
		case 409:
			conflict++
			var st map[string]any
			_ = json.Unmarshal(bodies[i], &st)
			if st["kind"] != "Status" || st["reason"] != "Conflict" {
				t.Errorf("conflict body = %s", bodies[i])
			}
		default:
			t.Errorf("unexpected %d: %s", code, bodies[i])
		}
	}
	if ok != 1 || conflict != 1 {
		t.Fatalf("got %d successes and %d conflicts, want 1 and 1", ok, conflict)
	}
	// A stale resourceVersion is refused, not merged.
	stale := configMap("cc", nil, map[string]string{"v": "stale"})
	meta(stale)["resourceVersion"] = base
	if r := c.do("PUT", cms+"/cc", stale, ""); r.Code != 409 {
		t.Fatalf("stale update: %d %s", r.Code, r.Body)
	}
	// Create of an existing name is AlreadyExists.
	r := c.do("POST", cms, configMap("cc", nil, nil), "")
	if r.Code != 409 || r.obj(t)["reason"] != "AlreadyExists" {
		t.Fatalf("duplicate create: %d %s", r.Code, r.Body)
	}
}

func TestWatchResumesAcrossRestartWithNothingLost(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	c.must(201, "POST", cms, configMap("w0", nil, nil))
	start := rv(c.must(200, "GET", cms+"/w0", nil))
	var want []string
	for i := 1; i <= 5; i++ {
		o := c.must(201, "POST", cms, configMap(fmt.Sprintf("w%d", i), nil, nil))
		want = append(want, "ADDED "+name(o)+" "+rv(o))
	}
	o := c.must(200, "PUT", cms+"/w1", configMap("w1", map[string]string{"x": "y"}, nil))
	want = append(want, "MODIFIED w1 "+rv(o))
	o = c.must(200, "DELETE", cms+"/w2", nil)
	_ = o

	opts := s.Options
	s.Shutdown()
	s2 := apiservertest.StartWith(t, opts)
	c2 := newClient(t, s2)
	// The deletion's revision is only known from the watch; check it comes last.
	w := c2.watch(cms + "?resourceVersion=" + start)
	for _, exp := range want {
		ev := w.next(10 * time.Second)
		got := ev.Type + " " + name(ev.Object) + " " + rv(ev.Object)
		if got != exp {
			t.Fatalf("event = %q, want %q", got, exp)
		}
	}
	ev := w.next(10 * time.Second)
	if ev.Type != "DELETED" || name(ev.Object) != "w2" {
		t.Fatalf("event = %s %s, want DELETED w2", ev.Type, name(ev.Object))
	}
	// And the stream goes on live after the restart, without duplicates.
	o = c2.must(201, "POST", cms, configMap("w6", nil, nil))
	ev = w.next(10 * time.Second)
	if ev.Type != "ADDED" || name(ev.Object) != "w6" || rv(ev.Object) != rv(o) {
		t.Fatalf("live event = %s %s %s", ev.Type, name(ev.Object), rv(ev.Object))
	}
	w.expectNone(500 * time.Millisecond)
}

func TestWatchFromCompactedRevisionIsGone(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, func(o *app.Options) { o.WatchCacheEvents = 8 })
	c := newClient(t, s)
	first := c.must(201, "POST", cms, configMap("g0", nil, nil))
	var last map[string]any
	for i := 1; i < 40; i++ {
		last = c.must(201, "POST", cms, configMap(fmt.Sprintf("g%d", i), nil, nil))
	}
	var lastRV int64
	fmt.Sscan(rv(last), &lastRV)
	if _, err := s.Backend().Client().Compact(t.Context(), lastRV); err != nil {
		t.Fatalf("compact: %v", err)
	}
	w := c.watch(cms + "?resourceVersion=" + rv(first))
	ev := w.next(10 * time.Second)
	if ev.Type != "ERROR" || ev.Object["code"] != float64(410) || ev.Object["reason"] != "Expired" {
		t.Fatalf("got %s %v, want ERROR 410 Expired", ev.Type, ev.Object)
	}
	// A list at the compacted revision is Gone as well.
	r := c.do("GET", cms+"?resourceVersion="+rv(first)+"&resourceVersionMatch=Exact", nil, "")
	if r.Code != 410 {
		t.Fatalf("exact list at compacted rv: %d %s", r.Code, r.Body)
	}
}

// TestListContinueAfterCompaction: a continue token whose revision etcd
// compacted is 410 Expired with, in the Status' metadata, the token of an
// inconsistent continuation, which lists the rest at the latest revision
// with the right remainingItemCount, as the conformance spec "Servers with
// support for API chunking should support continue listing from the last
// key if the original version has been compacted away" checks.
func TestListContinueAfterCompaction(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const ns = "/api/v1/namespaces/chunks/configmaps"
	c.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "chunks"}})
	for i := range 12 {
		c.must(201, "POST", ns, configMap(fmt.Sprintf("c%02d", i), nil, nil))
	}
	first := c.must(200, "GET", ns+"?limit=3", nil)
	lm := first["metadata"].(map[string]any)
	firstRV, tok := lm["resourceVersion"].(string), lm["continue"].(string)
	// A write after the first page, then the compaction of its revision.
	last := c.must(201, "POST", "/api/v1/namespaces/default/configmaps", configMap("later", nil, nil))
	var lastRV int64
	fmt.Sscan(rv(last), &lastRV)
	if _, err := s.Backend().Client().Compact(t.Context(), lastRV); err != nil {
		t.Fatalf("compact: %v", err)
	}
	r := c.do("GET", ns+"?limit=3&continue="+tok, nil, "")
	var st map[string]any
	if err := json.Unmarshal(r.Body, &st); err != nil || r.Code != 410 || st["reason"] != "Expired" {
		t.Fatalf("continue at a compacted revision: %d %s, want 410 Expired", r.Code, r.Body)
	}
	inconsistent, _ := st["metadata"].(map[string]any)["continue"].(string)
	if inconsistent == "" {
		t.Fatalf("the 410's Status has no continue token: %s", r.Body)
	}
	found := 3
	for tok := inconsistent; tok != ""; {
		page := c.must(200, "GET", ns+"?limit=3&continue="+tok, nil)
		lm := page["metadata"].(map[string]any)
		if lm["resourceVersion"] == firstRV {
			t.Fatalf("the inconsistent continuation listed at the first page's revision %s", firstRV)
		}
		items := page["items"].([]any)
		for _, it := range items {
			if got, want := name(it.(map[string]any)), fmt.Sprintf("c%02d", found); got != want {
				t.Fatalf("item %d is %s, want %s", found, got, want)
			}
			found++
		}
		tok, _ = lm["continue"].(string)
		remaining, hasRemaining := lm["remainingItemCount"].(float64)
		if tok != "" && (!hasRemaining || int(remaining)+found != 12) {
			t.Fatalf("after %d items remainingItemCount is %v, want %d", found, lm["remainingItemCount"], 12-found)
		}
	}
	if found != 12 {
		t.Fatalf("the continuation listed up to item %d, want 12", found)
	}
}

func TestWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	w := c.watch(cms + "?labelSelector=app%3Da&resourceVersion=0")
	c.must(201, "POST", cms, configMap("sel", map[string]string{"app": "a"}, nil))
	if ev := w.next(5 * time.Second); ev.Type != "ADDED" || name(ev.Object) != "sel" {
		t.Fatalf("got %s %s", ev.Type, name(ev.Object))
	}
	c.must(201, "POST", cms, configMap("other", map[string]string{"app": "b"}, nil))
	c.must(200, "PUT", cms+"/sel", configMap("sel", map[string]string{"app": "b"}, nil))
	if ev := w.next(5 * time.Second); ev.Type != "DELETED" || name(ev.Object) != "sel" {
		t.Fatalf("stop matching: got %s %s, want DELETED sel", ev.Type, name(ev.Object))
	}
	c.must(200, "PUT", cms+"/other", configMap("other", map[string]string{"app": "a"}, nil))
	if ev := w.next(5 * time.Second); ev.Type != "ADDED" || name(ev.Object) != "other" {
		t.Fatalf("start matching: got %s %s, want ADDED other", ev.Type, name(ev.Object))
	}
	w.expectNone(300 * time.Millisecond)
}

func TestWatchBookmarks(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	o := c.must(201, "POST", cms, configMap("bm", nil, nil))
	w := c.watch(cms + "?allowWatchBookmarks=true&resourceVersion=" + rv(o))
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type != "BOOKMARK" {
				t.Fatalf("unexpected %s", ev.Type)
			}
			if ev.Object["kind"] != "ConfigMap" || rv(ev.Object) == "" {
				t.Fatalf("bookmark object = %v", ev.Object)
			}
			return
		case <-deadline:
			t.Fatal("no BOOKMARK within 10s (interval is 1s in tests)")
		}
	}
}

func TestWatchSendInitialEvents(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	c.must(201, "POST", cms, configMap("ie1", nil, nil))
	c.must(201, "POST", cms, configMap("ie2", nil, nil))
	w := c.watch(cms + "?sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=")
	seen := map[string]bool{}
	for {
		ev := <-w.events
		if ev.Type == "ADDED" {
			seen[name(ev.Object)] = true
			continue
		}
		if ev.Type == "BOOKMARK" && meta(ev.Object)["annotations"] != nil {
			ann := meta(ev.Object)["annotations"].(map[string]any)
			if ann["k8s.io/initial-events-end"] != "true" {
				t.Fatalf("bookmark annotations = %v", ann)
			}
			break
		}
		t.Fatalf("unexpected event %s", ev.Type)
	}
	if !seen["ie1"] || !seen["ie2"] {
		t.Fatalf("initial events = %v", seen)
	}
}

func TestPagingIsConsistentAcrossPages(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	for i := range 25 {
		c.must(201, "POST", cms, configMap(fmt.Sprintf("p%02d", i), nil, nil))
	}
	page := c.must(200, "GET", cms+"?limit=10", nil)
	items := page["items"].([]any)
	if len(items) != 10 {
		t.Fatalf("first page has %d items", len(items))
	}
	lm := page["metadata"].(map[string]any)
	if lm["remainingItemCount"] != float64(15) {
		t.Fatalf("remainingItemCount = %v", lm["remainingItemCount"])
	}
	firstRV := lm["resourceVersion"]
	// A write between pages is not seen by the paged list: it reads one snapshot.
	c.must(201, "POST", cms, configMap("p00a", nil, nil))
	names := []string{}
	for _, it := range items {
		names = append(names, name(it.(map[string]any)))
	}
	for cont := lm["continue"].(string); cont != ""; {
		page = c.must(200, "GET", cms+"?limit=10&continue="+cont, nil)
		for _, it := range page["items"].([]any) {
			names = append(names, name(it.(map[string]any)))
		}
		lm = page["metadata"].(map[string]any)
		if lm["resourceVersion"] != firstRV {
			t.Fatalf("page resourceVersion %v, want %v", lm["resourceVersion"], firstRV)
		}
		cont, _ = lm["continue"].(string)
	}
	if len(names) != 25 || names[0] != "p00" || names[24] != "p24" {
		t.Fatalf("paged names = %v", names)
	}
	if r := c.do("GET", cms+"?limit=10&continue=garbage", nil, ""); r.Code != 400 {
		t.Fatalf("bad continue: %d", r.Code)
	}
	// A label-selected page still fills up to the limit.
	full := c.must(200, "GET", cms, nil)
	if n := len(full["items"].([]any)); n != 26 {
		t.Fatalf("unpaged list has %d items, want 26", n)
	}
}

func TestStatusSubresourceAndGeneration(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const deps = "/apis/apps/v1/namespaces/default/deployments"
	d := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
		"status": map[string]any{"replicas": 7},
	}
	created := c.must(201, "POST", deps, d)
	if st, _ := created["status"].(map[string]any); st["replicas"] != nil {
		t.Fatalf("status set on create: %v", st)
	}
	if meta(created)["generation"] != float64(1) {
		t.Fatalf("generation = %v", meta(created)["generation"])
	}
	// PUT on the main resource ignores status.
	created["status"] = map[string]any{"replicas": 5}
	created["spec"].(map[string]any)["replicas"] = 3
	upd := c.must(200, "PUT", deps+"/web", created)
	if st, _ := upd["status"].(map[string]any); st["replicas"] != nil {
		t.Fatalf("status changed through main resource: %v", st)
	}
	if meta(upd)["generation"] != float64(2) {
		t.Fatalf("generation after spec change = %v", meta(upd)["generation"])
	}
	// /status ignores spec and does not bump generation.
	upd["status"] = map[string]any{"replicas": 3, "observedGeneration": 2}
	upd["spec"].(map[string]any)["replicas"] = 9
	st := c.must(200, "PUT", deps+"/web/status", upd)
	if st["spec"].(map[string]any)["replicas"] != float64(3) {
		t.Fatalf("spec changed through /status: %v", st["spec"])
	}
	if st["status"].(map[string]any)["replicas"] != float64(3) || meta(st)["generation"] != float64(2) {
		t.Fatalf("status update: status=%v generation=%v", st["status"], meta(st)["generation"])
	}
	// A metadata-only change does not bump generation either.
	st["metadata"].(map[string]any)["labels"] = map[string]any{"team": "x"}
	again := c.must(200, "PUT", deps+"/web", st)
	if meta(again)["generation"] != float64(2) {
		t.Fatalf("generation after label change = %v", meta(again)["generation"])
	}
	// An update that changes nothing writes nothing.
	same := c.must(200, "PUT", deps+"/web", again)
	if rv(same) != rv(again) {
		t.Fatalf("no-op update changed resourceVersion %s -> %s", rv(again), rv(same))
	}
	// /scale reads and writes spec.replicas.
	sc := c.must(200, "GET", deps+"/web/scale", nil)
	if sc["kind"] != "Scale" || sc["spec"].(map[string]any)["replicas"] != float64(3) || sc["status"].(map[string]any)["selector"] != "app=web" {
		t.Fatalf("scale = %v", sc)
	}
	c.must(200, "PATCH", deps+"/web/scale", `{"spec":{"replicas":4}}`, "application/merge-patch+json")
	if got := c.must(200, "GET", deps+"/web", nil)["spec"].(map[string]any)["replicas"]; got != float64(4) {
		t.Fatalf("replicas after scale patch = %v", got)
	}
}

func TestGracefulPodDeletion(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const pods = "/api/v1/namespaces/default/pods"
	c.must(201, "POST", pods, pod("gp", "c"))
	c.must(201, "POST", pods+"/gp/binding", map[string]any{"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": "gp"}, "target": map[string]any{"kind": "Node", "name": "node-1"}})
	// Binding twice is a conflict.
	if r := c.do("POST", pods+"/gp/binding", map[string]any{"metadata": map[string]any{"name": "gp"},
		"target": map[string]any{"name": "node-2"}}, ""); r.Code != 409 {
		t.Fatalf("second binding: %d %s", r.Code, r.Body)
	}
	del := c.must(200, "DELETE", pods+"/gp", nil)
	if meta(del)["deletionTimestamp"] == nil || meta(del)["deletionGracePeriodSeconds"] != float64(30) {
		t.Fatalf("graceful delete returned %v", meta(del))
	}
	got := c.must(200, "GET", pods+"/gp", nil)
	if meta(got)["deletionTimestamp"] == nil {
		t.Fatal("pod lost its deletionTimestamp")
	}
	// The kubelet's final delete with grace 0 removes it.
	c.must(200, "DELETE", pods+"/gp?gracePeriodSeconds=0", nil)
	if r := c.do("GET", pods+"/gp", nil, ""); r.Code != 404 {
		t.Fatalf("after final delete: %d", r.Code)
	}
	// An unscheduled pod goes at once.
	c.must(201, "POST", pods, pod("unbound", "c"))
	c.must(200, "DELETE", pods+"/unbound", nil)
	if r := c.do("GET", pods+"/unbound", nil, ""); r.Code != 404 {
		t.Fatalf("unbound pod still there: %d", r.Code)
	}
}

func TestFinalizersHoldDeletion(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	cm := configMap("fin", nil, nil)
	meta(cm)["finalizers"] = []string{"example.com/hold"}
	c.must(201, "POST", cms, cm)
	del := c.must(200, "DELETE", cms+"/fin", nil)
	if meta(del)["deletionTimestamp"] == nil {
		t.Fatalf("delete with finalizer returned %v", del)
	}
	cur := c.must(200, "GET", cms+"/fin", nil)
	// No new finalizers on an object being deleted.
	meta(cur)["finalizers"] = []string{"example.com/hold", "example.com/more"}
	if r := c.do("PUT", cms+"/fin", cur, ""); r.Code != 422 {
		t.Fatalf("adding a finalizer while deleting: %d %s", r.Code, r.Body)
	}
	// Removing the last finalizer completes the deletion.
	c.must(200, "PATCH", cms+"/fin", `{"metadata":{"finalizers":null}}`, "application/merge-patch+json")
	if r := c.do("GET", cms+"/fin", nil, ""); r.Code != 404 {
		t.Fatalf("after removing finalizers: %d %s", r.Code, r.Body)
	}
	// Foreground propagation adds the garbage collector's finalizer.
	c.must(201, "POST", cms, configMap("fg", nil, nil))
	fg := c.must(200, "DELETE", cms+"/fg", map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})
	if f := meta(fg)["finalizers"]; fmt.Sprint(f) != "[foregroundDeletion]" {
		t.Fatalf("foreground finalizers = %v", f)
	}
}

func TestValidationErrorsCarryFieldCauses(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	bad := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "Bad_Name"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c"}}}}
	r := c.do("POST", "/api/v1/namespaces/default/pods", bad, "")
	if r.Code != 422 {
		t.Fatalf("code %d: %s", r.Code, r.Body)
	}
	st := r.obj(t)
	if st["kind"] != "Status" || st["reason"] != "Invalid" || !strings.HasPrefix(st["message"].(string), `Pod "Bad_Name" is invalid: `) {
		t.Fatalf("status = %v", st)
	}
	fields := map[string]bool{}
	for _, cz := range st["details"].(map[string]any)["causes"].([]any) {
		fields[cz.(map[string]any)["field"].(string)] = true
	}
	if !fields["metadata.name"] || !fields["spec.containers[0].image"] {
		t.Fatalf("causes fields = %v", fields)
	}
	// Nothing was stored.
	if r := c.do("GET", "/api/v1/namespaces/default/pods/Bad_Name", nil, ""); r.Code != 404 {
		t.Fatalf("invalid pod stored: %d", r.Code)
	}
}

func TestOversizeBodyIs413(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	big := configMap("big", nil, map[string]string{"k": strings.Repeat("x", 3<<20+10)})
	r := c.do("POST", cms, big, "")
	if r.Code != http.StatusRequestEntityTooLarge || r.obj(t)["reason"] != "RequestEntityTooLarge" {
		t.Fatalf("code %d: %.200s", r.Code, r.Body)
	}
	// Under the 3 MiB body limit but over etcd's own 1.5 MiB request limit:
	// a clean Status, not a crash, and nothing stored.
	p := pod("huge", "c")
	p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"] = []string{strings.Repeat("y", 2<<20)}
	r = c.do("POST", "/api/v1/namespaces/default/pods", p, "")
	if r.Code != http.StatusRequestEntityTooLarge || r.obj(t)["kind"] != "Status" {
		t.Fatalf("etcd-oversize pod: code %d: %.300s", r.Code, r.Body)
	}
	if r := c.do("GET", "/api/v1/namespaces/default/pods/huge", nil, ""); r.Code != 404 {
		t.Fatalf("oversize pod stored: %d", r.Code)
	}
	if r := c.do("GET", "/readyz", nil, ""); r.Code != 200 {
		t.Fatalf("readyz after oversize write: %d %s", r.Code, r.Body)
	}
}

func TestUnknownFieldsAreTolerated(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"uf","futureField":{"a":1}},"data":{"a":"b"},"someNewTopLevel":[1,2,3]}`
	o := c.must(201, "POST", cms, body)
	if o["data"].(map[string]any)["a"] != "b" {
		t.Fatalf("created %v", o)
	}
	// YAML bodies are accepted too.
	c.must(201, "POST", cms, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromyaml\ndata:\n  x: hello\n", "application/yaml")
}

func TestStrategicMergeOfContainersByName(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const pods = "/api/v1/namespaces/default/pods"
	c.must(201, "POST", pods, pod("smp", "a", "b"))
	p := c.must(200, "PATCH", pods+"/smp", `{"spec":{"containers":[{"name":"b","image":"busybox:1.37"}]}}`, "application/strategic-merge-patch+json")
	cs := p["spec"].(map[string]any)["containers"].([]any)
	if len(cs) != 2 {
		t.Fatalf("containers after strategic merge: %v", cs)
	}
	for _, x := range cs {
		m := x.(map[string]any)
		want := "busybox:1.36"
		if m["name"] == "b" {
			want = "busybox:1.37"
		}
		if m["image"] != want {
			t.Fatalf("container %v image %v, want %v", m["name"], m["image"], want)
		}
	}
	// A JSON merge patch replaces the list: dropping a container is forbidden on pods.
	r := c.do("PATCH", pods+"/smp", `{"spec":{"containers":[{"name":"b","image":"busybox:1.37"}]}}`, "application/merge-patch+json")
	if r.Code != 422 {
		t.Fatalf("merge patch that drops a container: %d %s", r.Code, r.Body)
	}
}

func TestNamespaceLifecycleAndErrors(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	for _, ns := range []string{"default", "kube-system", "kube-node-lease", "kube-public"} {
		c.must(200, "GET", "/api/v1/namespaces/"+ns, nil)
	}
	r := c.do("POST", "/api/v1/namespaces/nope/configmaps", configMap("x", nil, nil), "")
	if r.Code != 404 || r.obj(t)["message"] != `namespaces "nope" not found` {
		t.Fatalf("create in missing namespace: %d %s", r.Code, r.Body)
	}
	c.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "doomed"}})
	c.must(201, "POST", "/api/v1/namespaces/doomed/configmaps", configMap("x", nil, nil))
	del := c.must(200, "DELETE", "/api/v1/namespaces/doomed", nil)
	if del["status"].(map[string]any)["phase"] != "Terminating" {
		t.Fatalf("deleted namespace = %v", del["status"])
	}
	// A status write (the namespace controller's conditions) does not
	// finish the deletion while spec.finalizers still holds "kubernetes".
	st := c.must(200, "GET", "/api/v1/namespaces/doomed", nil)
	st["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain"}}
	c.must(200, "PUT", "/api/v1/namespaces/doomed/status", st)
	c.must(200, "GET", "/api/v1/namespaces/doomed", nil)
	r = c.do("POST", "/api/v1/namespaces/doomed/configmaps", configMap("y", nil, nil), "")
	if r.Code != 403 || !strings.Contains(r.obj(t)["message"].(string), "because it is being terminated") {
		t.Fatalf("create in terminating namespace: %d %s", r.Code, r.Body)
	}
	if r := c.do("DELETE", "/api/v1/namespaces/kube-system", nil, ""); r.Code != 403 {
		t.Fatalf("delete kube-system: %d", r.Code)
	}
	if r := c.do("GET", "/api/v1/namespaces/default/widgets", nil, ""); r.Code != 404 || r.obj(t)["kind"] != "Status" {
		t.Fatalf("unknown resource: %d %s", r.Code, r.Body)
	}
	r = c.do("GET", "/api/v1/namespaces/default/configmaps/missing", nil, "")
	if r.Code != 404 || r.obj(t)["message"] != `configmaps "missing" not found` {
		t.Fatalf("get missing: %d %s", r.Code, r.Body)
	}
	r = c.do("GET", "/api/v1/pods?labelSelector=a%20in%20(", nil, "")
	if r.Code != 400 {
		t.Fatalf("bad selector: %d %s", r.Code, r.Body)
	}
	r = c.do("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx", nil, "")
	if r.Code != 400 || !strings.Contains(string(r.Body), "field label not supported") {
		t.Fatalf("bad field selector: %d %s", r.Code, r.Body)
	}
	gn := c.must(201, "POST", cms, map[string]any{"metadata": map[string]any{"generateName": "gen-"}})
	if n := name(gn); !strings.HasPrefix(n, "gen-") || len(n) != len("gen-")+5 {
		t.Fatalf("generated name %q", n)
	}
}

func TestFieldSelectorOnPods(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const pods = "/api/v1/namespaces/default/pods"
	for _, n := range []string{"f1", "f2", "f3"} {
		c.must(201, "POST", pods, pod(n, "c"))
	}
	w := c.watch("/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a&resourceVersion=0")
	c.must(201, "POST", pods+"/f2/binding", map[string]any{"metadata": map[string]any{"name": "f2"}, "target": map[string]any{"name": "node-a"}})
	c.must(201, "POST", pods+"/f3/binding", map[string]any{"metadata": map[string]any{"name": "f3"}, "target": map[string]any{"name": "node-b"}})
	if ev := w.next(5 * time.Second); ev.Type != "ADDED" || name(ev.Object) != "f2" {
		t.Fatalf("node watch got %s %s", ev.Type, name(ev.Object))
	}
	w.expectNone(300 * time.Millisecond)
	l := c.must(200, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D", nil)
	if n := len(l["items"].([]any)); n != 1 {
		t.Fatalf("unbound pods = %d, want 1", n)
	}
}

func TestDeleteCollectionAndWatchTimeout(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	for i, app := range []string{"a", "a", "b"} {
		c.must(201, "POST", cms, configMap(fmt.Sprintf("dc%d", i), map[string]string{"app": app}, nil))
	}
	del := c.must(200, "DELETE", cms+"?labelSelector=app%3Da", nil)
	if del["kind"] != "ConfigMapList" || len(del["items"].([]any)) != 2 {
		t.Fatalf("deletecollection returned %v", del)
	}
	left := c.must(200, "GET", cms, nil)["items"].([]any)
	if len(left) != 1 || name(left[0].(map[string]any)) != "dc2" {
		t.Fatalf("left after deletecollection: %v", left)
	}
	start := time.Now()
	w := c.watch(cms + "?timeoutSeconds=1&resourceVersion=0")
	for range w.events {
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 10*time.Second {
		t.Fatalf("watch with timeoutSeconds=1 ended after %v", d)
	}
}

func TestDefaultTolerationSecondsAdmission(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	p := c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("tol", "c"))
	got := map[string]any{}
	for _, x := range p["spec"].(map[string]any)["tolerations"].([]any) {
		m := x.(map[string]any)
		got[m["key"].(string)] = m["tolerationSeconds"]
	}
	for _, k := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		if got[k] != float64(300) {
			t.Fatalf("toleration %s = %v, want 300s (tolerations %v)", k, got[k], got)
		}
	}
}
