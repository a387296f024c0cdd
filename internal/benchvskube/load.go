package benchvskube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// benchNamespace holds the load's pods and configmaps.
const benchNamespace = "bench"

// setup makes the namespace with its default ServiceAccount (kube-apiserver
// without a controller-manager has none, and its ServiceAccount admission
// wants it) and lets the bench user create, read, list and watch pods and
// configmaps through a ClusterRole and a ClusterRoleBinding; it returns once
// RBAC allows the bench user to list pods.
func setup(ctx context.Context, a *apiserver) error {
	admin := a.client(adminToken, 4)
	defer admin.close()
	objs := []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + benchNamespace + `"}}`},
		{"/api/v1/namespaces/" + benchNamespace + "/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`},
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"bench"},
			"rules":[{"verbs":["create","get","list","watch"],"apiGroups":[""],"resources":["pods","configmaps"]}]}`},
		{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"bench"},
			"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"` + benchUser + `"}],
			"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"bench"}}`},
	}
	for _, o := range objs {
		if _, err := admin.mustDo(ctx, http.MethodPost, o.path, []byte(o.body), http.StatusCreated, http.StatusConflict); err != nil {
			return err
		}
	}
	c := a.client(benchToken, 1)
	defer c.close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+benchNamespace+"/pods?limit=1", "", nil)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s cannot list pods: %d %v %s", a.name, benchUser, code, err, body)
		}
	}
}

// podTemplate is the pods' manifest with a name placeholder, encoded once.
// No scheduler takes them (schedulerName names none), so the scheduler
// rounds later see only their own pods.
var podTemplate, _ = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod",
	"metadata": map[string]any{"name": "NAME_PLACEHOLDER", "labels": map[string]string{"app": "bench"}},
	"spec": map[string]any{"schedulerName": "bench-vs-kube-none", "containers": []any{map[string]any{"name": "c", "image": "busybox:1.36",
		"resources": map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "64Mi"}}}}}})

func podBody(tmpl []byte, name string) []byte {
	return bytes.Replace(tmpl, []byte("NAME_PLACEHOLDER"), []byte(name), 1)
}

// createPods creates total pods named prefix-N in ns from workers clients
// and returns creates per second.
func createPods(ctx context.Context, a *apiserver, token, ns, prefix string, tmpl []byte, total, workers int) (float64, error) {
	c := a.client(token, workers)
	defer c.close()
	path := "/api/v1/namespaces/" + ns + "/pods"
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(total) || failed.Load() != nil {
					return
				}
				if _, err := c.mustDo(ctx, http.MethodPost, path, podBody(tmpl, fmt.Sprintf("%s-%d", prefix, i)), http.StatusCreated); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	return float64(total) / time.Since(start).Seconds(), nil
}

// listLatency lists the bench namespace's pods once with query and accept
// and checks the answer holds want pods (JSON only), then n times more,
// timed, and returns
// p50 and p99 in milliseconds and the response size in MiB.
func listLatency(ctx context.Context, a *apiserver, query, accept string, n, want int) (p50, p99, mib float64, err error) {
	c := a.client(benchToken, 1)
	defer c.close()
	path := "/api/v1/namespaces/" + benchNamespace + "/pods" + query
	var lat []time.Duration
	// The first list is read whole and checked; the others' bodies are
	// read and dropped, so the client's own copying stays out of the
	// figures.
	code, body, err := c.do(ctx, http.MethodGet, path, accept, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	if code != http.StatusOK {
		return 0, 0, 0, fmt.Errorf("%s: list %s: %d %s", a.name, query, code, body[:min(len(body), 300)])
	}
	mib = float64(len(body)) / (1 << 20)
	if accept == "" {
		var l struct {
			Items []struct{} `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return 0, 0, 0, err
		}
		if len(l.Items) != want {
			return 0, 0, 0, fmt.Errorf("%s: list %s: %d pods, want %d", a.name, query, len(l.Items), want)
		}
	}
	for range n {
		start := time.Now()
		code, size, err := c.discard(ctx, path, accept)
		d := time.Since(start)
		if err != nil {
			return 0, 0, 0, err
		}
		// The same items; only the list's resourceVersion may differ.
		if code != http.StatusOK || size < int64(len(body))-32 || size > int64(len(body))+32 {
			return 0, 0, 0, fmt.Errorf("%s: list %s: %d, %d bytes after %d", a.name, query, code, size, len(body))
		}
		lat = append(lat, d)
	}
	p50, p99 = percentiles(lat)
	return p50, p99, mib, nil
}

// percentiles are the p50 and p99 of lat in milliseconds (nearest rank).
func percentiles(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[(len(lat)-1)/2]), ms(lat[(len(lat)*99+99)/100-1])
}

// watchLatency opens watchers watches of the bench namespace's configmaps
// labelled bench=watch (one HTTP/1.1 connection each, as the bench user),
// then creates events such configmaps 20 ms apart and returns p50 and p99
// of write to ADDED event received over all watchers, and the share of
// events delivered.
func watchLatency(ctx context.Context, a *apiserver, watchers, events int) (p50, p99, delivered float64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wc := a.client(benchToken, watchers+1)
	wc.hc.Timeout = 0
	defer wc.close()
	var (
		mu      sync.Mutex
		sent    = map[string]time.Time{}
		lat     []time.Duration
		pending sync.WaitGroup
		opened  sync.WaitGroup
		openErr atomic.Value
	)
	path := "/api/v1/namespaces/" + benchNamespace + "/configmaps?watch=true&resourceVersion=0&labelSelector=bench%3Dwatch"
	for range watchers {
		opened.Add(1)
		go func() {
			resp, err := wc.sendRetrying(ctx, func() (*http.Request, error) { return wc.request(ctx, http.MethodGet, path, "", nil) })
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("watch: %s", resp.Status)
				resp.Body.Close()
			}
			if err != nil {
				openErr.Store(err)
				opened.Done()
				return
			}
			defer resp.Body.Close()
			opened.Done()
			br := bufio.NewReaderSize(resp.Body, 16<<10)
			prefix, key := []byte(`{"type":"ADDED"`), []byte(`"name":"`)
			for {
				line, err := br.ReadSlice('\n')
				if err == bufio.ErrBufferFull {
					// Not an event of ours; skip the rest of it.
					for err == bufio.ErrBufferFull {
						_, err = br.ReadSlice('\n')
					}
					continue
				}
				if err != nil {
					return
				}
				now := time.Now()
				if !bytes.HasPrefix(line, prefix) {
					continue
				}
				i := bytes.Index(line, key)
				if i < 0 {
					continue
				}
				rest := line[i+len(key):]
				j := bytes.IndexByte(rest, '"')
				if j < 0 {
					continue
				}
				mu.Lock()
				t0, ok := sent[string(rest[:j])]
				if ok {
					lat = append(lat, now.Sub(t0))
				}
				mu.Unlock()
				if ok {
					pending.Done()
				}
			}
		}()
	}
	opened.Wait()
	if err, ok := openErr.Load().(error); ok {
		return 0, 0, 0, fmt.Errorf("%s: %w", a.name, err)
	}
	// Let the watches settle past their initial (empty) lists.
	time.Sleep(time.Second)
	w := a.client(benchToken, 1)
	defer w.close()
	for i := range events {
		name := fmt.Sprintf("watch-%d", i)
		body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","labels":{"bench":"watch"}},"data":{"k":"v"}}`)
		pending.Add(watchers)
		mu.Lock()
		sent[name] = time.Now()
		mu.Unlock()
		if _, err := w.mustDo(ctx, http.MethodPost, "/api/v1/namespaces/"+benchNamespace+"/configmaps", body, http.StatusCreated); err != nil {
			return 0, 0, 0, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	p50, p99 = percentiles(lat)
	return p50, p99, float64(len(lat)) / float64(watchers*events), nil
}
