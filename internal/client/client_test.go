package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// Test-local kinds, so the tests do not depend on kinds other engineers own.
type testPod struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Spec           struct {
		NodeName string `json:"nodeName,omitempty"`
	} `json:"spec"`
}

type testNode struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}

var (
	podInfo  = api.ResourceInfo{Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true}
	nodeInfo = api.ResourceInfo{Version: "v1", Kind: "Node", Resource: "nodes"}
	deplInfo = api.ResourceInfo{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespaced: true}
)

// recorded is one request the fake server saw.
type recorded struct {
	Method, Path, RawQuery, ContentType, Accept, UserAgent, Auth string
	Body                                                         string
	Proto                                                        int
}

// fakeServer records requests and answers with a canned handler.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newFakeServer(t *testing.T, h http.HandlerFunc) *fakeServer {
	t.Helper()
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(fs.wrap(h))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) wrap(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, recorded{
			Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
			ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"),
			UserAgent: r.Header.Get("User-Agent"), Auth: r.Header.Get("Authorization"),
			Body: string(b), Proto: r.ProtoMajor,
		})
		fs.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}
}

func (fs *fakeServer) requests() []recorded {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]recorded(nil), fs.reqs...)
}

func (fs *fakeServer) last(t *testing.T) recorded {
	t.Helper()
	r := fs.requests()
	if len(r) == 0 {
		t.Fatal("server saw no request")
	}
	return r[len(r)-1]
}

func newTestClient(t *testing.T, host string) *Client {
	t.Helper()
	c, err := New(&Config{Host: host, QPS: -1, UserAgent: "minik8s-test/v0.0.1", BearerToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// echo answers every request with a minimal object named after the path's
// last element, without apiVersion/kind, as list items often are.
func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(r.URL.Path, "/")
	name := parts[len(parts)-1]
	if r.Method == http.MethodPost {
		name = "created"
	}
	fmt.Fprintf(w, `{"metadata":{"name":%q,"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}}]}`, name)
}

func writeStatus(w http.ResponseWriter, st *apierrors.StatusError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.ErrStatus.Code))
	_ = json.NewEncoder(w).Encode(st.ErrStatus)
}

func TestPathsAndVerbs(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, echo)
	c := newTestClient(t, fs.URL)
	ctx := context.Background()
	pods := ResourceFor[testPod](c, podInfo).Namespace("default")
	allPods := ResourceFor[testPod](c, podInfo)
	nodes := ResourceFor[testNode](c, nodeInfo).Namespace("ignored")
	leases := Resource[api.Lease](c).Namespace("kube-system")
	depl := c.Dynamic(deplInfo).Namespace("prod")
	pod := &testPod{ObjectMeta: api.ObjectMeta{Name: "web-1"}}

	tests := []struct {
		name        string
		call        func() error
		method      string
		path        string
		query       string
		contentType string
		body        string // substring expected in the body
	}{
		{"get core namespaced", func() error { _, err := pods.Get(ctx, "web-1"); return err },
			"GET", "/api/v1/namespaces/default/pods/web-1", "", "", ""},
		{"get cluster-scoped ignores namespace", func() error { _, err := nodes.Get(ctx, "n1"); return err },
			"GET", "/api/v1/nodes/n1", "", "", ""},
		{"get group kind", func() error { _, err := leases.Get(ctx, "sched"); return err },
			"GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sched", "", "", ""},
		{"list all namespaces", func() error { _, err := allPods.List(ctx, ListOptions{}); return err },
			"GET", "/api/v1/pods", "", "", ""},
		{"list with options", func() error {
			to := int64(30)
			_, err := pods.List(ctx, ListOptions{LabelSelector: "app=web", FieldSelector: "spec.nodeName=n1",
				ResourceVersion: "0", Limit: 500, Continue: "tok", TimeoutSeconds: &to})
			return err
		}, "GET", "/api/v1/namespaces/default/pods", "continue=tok&fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb&limit=500&resourceVersion=0&timeoutSeconds=30", "", ""},
		{"create uses object namespace when client has none", func() error {
			_, err := allPods.Create(ctx, &testPod{ObjectMeta: api.ObjectMeta{Name: "x", Namespace: "team"}})
			return err
		}, "POST", "/api/v1/namespaces/team/pods", "", "application/json", `"kind":"Pod"`},
		{"update", func() error { _, err := pods.Update(ctx, pod); return err },
			"PUT", "/api/v1/namespaces/default/pods/web-1", "", "application/json", `"apiVersion":"v1"`},
		{"update status", func() error { _, err := pods.UpdateStatus(ctx, pod); return err },
			"PUT", "/api/v1/namespaces/default/pods/web-1/status", "", "application/json", `"name":"web-1"`},
		{"merge patch", func() error {
			_, err := pods.Patch(ctx, "web-1", MergePatchType, []byte(`{"spec":{}}`))
			return err
		}, "PATCH", "/api/v1/namespaces/default/pods/web-1", "", "application/merge-patch+json", `{"spec":{}}`},
		{"json patch on status", func() error {
			_, err := pods.Patch(ctx, "web-1", JSONPatchType, []byte(`[]`), "status")
			return err
		}, "PATCH", "/api/v1/namespaces/default/pods/web-1/status", "", "application/json-patch+json", `[]`},
		{"strategic merge patch", func() error {
			_, err := leases.Patch(ctx, "l", StrategicMergePatchType, []byte(`{}`))
			return err
		}, "PATCH", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", "", "application/strategic-merge-patch+json", ""},
		{"apply patch names a field manager", func() error {
			_, err := pods.Patch(ctx, "web-1", ApplyPatchType, []byte(`kind: Pod`))
			return err
		}, "PATCH", "/api/v1/namespaces/default/pods/web-1", "fieldManager=minik8s-test", "application/apply-patch+yaml", "kind: Pod"},
		{"delete with options", func() error {
			gp := int64(0)
			return pods.Delete(ctx, "web-1", &api.DeleteOptions{GracePeriodSeconds: &gp})
		}, "DELETE", "/api/v1/namespaces/default/pods/web-1", "", "application/json", `"gracePeriodSeconds":0`},
		{"delete collection", func() error {
			return pods.DeleteCollection(ctx, nil, ListOptions{LabelSelector: "app=web"})
		}, "DELETE", "/api/v1/namespaces/default/pods", "labelSelector=app%3Dweb", "", ""},
		{"binding subresource", func() error {
			return pods.Subresource("web-1", "binding").Post(ctx, map[string]any{"target": map[string]string{"name": "n1"}}, nil)
		}, "POST", "/api/v1/namespaces/default/pods/web-1/binding", "", "application/json", `"target"`},
		{"scale subresource get", func() error {
			var out map[string]any
			return c.Dynamic(deplInfo).Namespace("prod").Subresource("web", "scale").Get(ctx, &out)
		}, "GET", "/apis/apps/v1/namespaces/prod/deployments/web/scale", "", "", ""},
		{"scale subresource merge patch", func() error {
			var out map[string]any
			return c.Dynamic(deplInfo).Namespace("prod").Subresource("web", "scale").Patch(ctx, MergePatchType, []byte(`{"spec":{"replicas":3}}`), &out)
		}, "PATCH", "/apis/apps/v1/namespaces/prod/deployments/web/scale", "", "application/merge-patch+json", `{"spec":{"replicas":3}}`},
		{"subresource apply patch names a field manager", func() error {
			return pods.Subresource("web-1", "status").Patch(ctx, ApplyPatchType, []byte(`kind: Pod`), nil)
		}, "PATCH", "/api/v1/namespaces/default/pods/web-1/status", "fieldManager=minik8s-test", "application/apply-patch+yaml", "kind: Pod"},
		{"log subresource stream", func() error {
			rc, err := pods.Subresource("web-1", "log").Param("container", "app").Param("follow", "true").Stream(ctx)
			if err != nil {
				return err
			}
			return rc.Close()
		}, "GET", "/api/v1/namespaces/default/pods/web-1/log", "container=app&follow=true", "", ""},
		{"dynamic get in group", func() error { _, err := depl.Get(ctx, "web"); return err },
			"GET", "/apis/apps/v1/namespaces/prod/deployments/web", "", "", ""},
		{"dynamic create", func() error {
			_, err := c.Dynamic(deplInfo).Create(ctx, &Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "prod"}}})
			return err
		}, "POST", "/apis/apps/v1/namespaces/prod/deployments", "", "application/json", `"name":"web"`},
		{"raw do", func() error {
			_, err := c.Do(ctx, Request{Path: "/version"})
			return err
		}, "GET", "/version", "", "", ""},
		{"name is escaped", func() error { _, err := nodes.Get(ctx, "a b"); return err },
			"GET", "/api/v1/nodes/a%20b", "", "", ""},
	}
	for _, tt := range tests {
		// Sequential: each case inspects the server's last request.
		if err := tt.call(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		r := fs.last(t)
		if r.Method != tt.method || r.Path != tt.path || r.RawQuery != tt.query {
			t.Errorf("%s: got %s %s?%s, want %s %s?%s", tt.name, r.Method, r.Path, r.RawQuery, tt.method, tt.path, tt.query)
		}
		if r.ContentType != tt.contentType {
			t.Errorf("%s: Content-Type %q, want %q", tt.name, r.ContentType, tt.contentType)
		}
		if !strings.Contains(r.Body, tt.body) {
			t.Errorf("%s: body %q does not contain %q", tt.name, r.Body, tt.body)
		}
		if r.UserAgent != "minik8s-test/v0.0.1" || r.Auth != "Bearer tok" {
			t.Errorf("%s: User-Agent %q, Authorization %q", tt.name, r.UserAgent, r.Auth)
		}
		if r.Accept == "" {
			t.Errorf("%s: no Accept header", tt.name)
		}
	}
}

func TestWatchQueryAndTypeMeta(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			return // an empty stream
		}
		echo(w, r)
	})
	c := newTestClient(t, fs.URL)
	ctx := context.Background()
	pods := ResourceFor[testPod](c, podInfo).Namespace("default")

	sie := true
	w, err := pods.Watch(ctx, ListOptions{ResourceVersion: "42", AllowWatchBookmarks: true, SendInitialEvents: &sie, LabelSelector: "a=b"})
	if err != nil {
		t.Fatal(err)
	}
	for range w.ResultChan() {
	}
	r := fs.last(t)
	if want := "allowWatchBookmarks=true&labelSelector=a%3Db&resourceVersion=42&sendInitialEvents=true&watch=true"; r.RawQuery != want {
		t.Errorf("watch query %q, want %q", r.RawQuery, want)
	}

	p, err := pods.Get(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "Pod" || p.APIVersion != "v1" || p.Name != "web-1" || p.ResourceVersion != "7" {
		t.Errorf("Get filled %+v", p.TypeMeta)
	}
	l, err := Resource[api.Lease](c).Namespace("x").List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != "LeaseList" || l.APIVersion != "coordination.k8s.io/v1" || l.ResourceVersion != "7" ||
		len(l.Items) != 1 || l.Items[0].Kind != "Lease" || l.Items[0].APIVersion != "coordination.k8s.io/v1" {
		t.Errorf("List filled %+v", l)
	}
	d, err := c.Dynamic(deplInfo).Namespace("p").Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if d.GetKind() != "Deployment" || d.GetAPIVersion() != "apps/v1" || d.GetName() != "web" {
		t.Errorf("dynamic Get filled %v", d.Object)
	}
}

func TestClientSideValidation(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, echo)
	c := newTestClient(t, fs.URL)
	ctx := context.Background()
	pods := ResourceFor[testPod](c, podInfo)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"empty name", func() error { _, err := pods.Namespace("d").Get(ctx, ""); return err }, "resource name may not be empty"},
		{"no namespace for named verb", func() error { _, err := pods.Get(ctx, "x"); return err }, "a namespace is required"},
		{"namespace mismatch", func() error {
			_, err := pods.Namespace("a").Create(ctx, &testPod{ObjectMeta: api.ObjectMeta{Name: "x", Namespace: "b"}})
			return err
		}, "does not match"},
		{"nil object", func() error { _, err := pods.Namespace("a").Create(ctx, nil); return err }, "nil object"},
		{"update without name", func() error { _, err := pods.Namespace("a").Update(ctx, &testPod{}); return err }, "resource name may not be empty"},
		{"subresource without name", func() error { return pods.Namespace("a").Subresource("", "binding").Post(ctx, nil, nil) }, "resource name may not be empty"},
		{"typed patch of a subresource of another kind", func() error {
			_, err := pods.Namespace("a").Patch(ctx, "x", MergePatchType, []byte(`{}`), "scale")
			return err
		}, `use Subresource("x", "scale").Patch`},
		{"subresource patch without type", func() error { return pods.Namespace("a").Subresource("x", "status").Patch(ctx, "", []byte(`{}`), nil) }, "patch type may not be empty"},
	}
	for _, tt := range tests {
		err := tt.call()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
	if n := len(fs.requests()); n != 0 {
		t.Errorf("invalid calls reached the server %d times", n)
	}
}

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		method  string
		check   func(error) bool
		message string
	}{
		{"server NotFound status", func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewNotFound(apierrors.GroupResource{Resource: "pods"}, "web-1"))
		}, http.MethodGet, apierrors.IsNotFound, `pods "web-1" not found`},
		{"server Conflict status", func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewConflict(apierrors.GroupResource{Resource: "pods"}, "web-1", errors.New(apierrors.OptimisticLockErrorMsg)))
		}, http.MethodPut, apierrors.IsConflict, `Operation cannot be fulfilled on pods "web-1": ` + apierrors.OptimisticLockErrorMsg},
		{"server AlreadyExists status", func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewAlreadyExists(apierrors.GroupResource{Resource: "pods"}, "web-1"))
		}, http.MethodPost, apierrors.IsAlreadyExists, `pods "web-1" already exists`},
		{"server Invalid status", func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewInvalid(apierrors.GroupKind{Kind: "Pod"}, "web-1", nil))
		}, http.MethodPost, apierrors.IsInvalid, `Pod "web-1" is invalid`},
		{"plain 404 is synthesized", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "404 page not found", http.StatusNotFound)
		}, http.MethodGet, apierrors.IsNotFound, "the server could not find the requested resource (get pods web-1)"},
		{"plain 409 on POST is AlreadyExists", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
		}, http.MethodPost, apierrors.IsAlreadyExists, "the server reported a conflict (post pods web-1)"},
		{"plain 409 on PUT is Conflict", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
		}, http.MethodPut, apierrors.IsConflict, "the server reported a conflict (put pods web-1)"},
		{"plain 500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, http.MethodGet, apierrors.IsInternalError, `an error on the server ("boom") has prevented the request from succeeding (get pods web-1)`},
		{"plain 410", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusGone)
		}, http.MethodGet, apierrors.IsGone, "the server responded with the status code 410 but did not return more information (get pods web-1)"},
		{"server Expired status", func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewResourceExpired("too old resource version: 1 (5)"))
		}, http.MethodGet, apierrors.IsResourceExpired, "too old resource version: 1 (5)"},
		{"plain 401", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
		}, http.MethodGet, apierrors.IsUnauthorized, "the server has asked for the client to provide credentials (get pods web-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, tt.handler)
			c := newTestClient(t, fs.URL)
			pods := ResourceFor[testPod](c, podInfo).Namespace("default")
			var err error
			pod := &testPod{ObjectMeta: api.ObjectMeta{Name: "web-1"}}
			switch tt.method {
			case http.MethodGet:
				_, err = pods.Get(context.Background(), "web-1")
			case http.MethodPut:
				_, err = pods.Update(context.Background(), pod)
			case http.MethodPost:
				_, err = pods.Create(context.Background(), pod)
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a StatusError", err, err)
			}
			if !tt.check(err) {
				t.Errorf("predicate false for %+v", se.ErrStatus)
			}
			if err.Error() != tt.message {
				t.Errorf("message %q, want %q", err.Error(), tt.message)
			}
		})
	}
}

func TestNetworkErrorWrapped(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := newTestClient(t, url)
	_, err := ResourceFor[testNode](c, nodeInfo).Get(context.Background(), "n1")
	if err == nil || !strings.Contains(err.Error(), "GET "+url+"/api/v1/nodes/n1") {
		t.Fatalf("error %v does not name the request", err)
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		t.Errorf("network error reported as StatusError")
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	t.Run("429 then success", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		n := 0
		fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			cur := n
			mu.Unlock()
			if cur <= 2 {
				w.Header().Set("Retry-After", "0")
				writeStatus(w, apierrors.NewTooManyRequests("slow down", 0))
				return
			}
			echo(w, r)
		})
		c := newTestClient(t, fs.URL)
		// Body of a retried request must be sent again in full.
		_, err := ResourceFor[testPod](c, podInfo).Namespace("d").Create(context.Background(), &testPod{ObjectMeta: api.ObjectMeta{Name: "p"}})
		if err != nil {
			t.Fatal(err)
		}
		reqs := fs.requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		for _, r := range reqs {
			if !strings.Contains(r.Body, `"name":"p"`) {
				t.Errorf("retried request lost its body: %q", r.Body)
			}
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			writeStatus(w, apierrors.NewTooManyRequests("slow down", 1))
		})
		c, err := New(&Config{Host: fs.URL, QPS: -1, MaxRetries: 3})
		if err != nil {
			t.Fatal(err)
		}
		c.maxRetryWait = 5 * time.Millisecond
		_, err = ResourceFor[testNode](c, nodeInfo).Get(context.Background(), "n")
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("error %v, want TooManyRequests", err)
		}
		if n := len(fs.requests()); n != 4 {
			t.Errorf("%d requests, want 1 + 3 retries", n)
		}
	})
	t.Run("429 without Retry-After is not retried", func(t *testing.T) {
		t.Parallel()
		fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0))
		})
		c := newTestClient(t, fs.URL)
		_, err := ResourceFor[testNode](c, nodeInfo).Get(context.Background(), "n")
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("error %v", err)
		}
		if n := len(fs.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("5xx without Retry-After is not retried", func(t *testing.T) {
		t.Parallel()
		fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			writeStatus(w, apierrors.NewServiceUnavailable("down"))
		})
		c := newTestClient(t, fs.URL)
		_, err := ResourceFor[testNode](c, nodeInfo).Get(context.Background(), "n")
		if !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("error %v", err)
		}
		if n := len(fs.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, echo)
	c, err := New(&Config{Host: fs.URL, QPS: 5, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	nodes := ResourceFor[testNode](c, nodeInfo)
	const n = 6
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := nodes.Get(context.Background(), "n"); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	// n requests at 5 QPS with a burst of one need (n-1)/5 s.
	want := time.Duration(n-1) * time.Second / 5
	if ratio := float64(elapsed) / float64(want); ratio < 0.8 {
		t.Errorf("%d requests took %v, want about %v (ratio %.2f)", n, elapsed, want, ratio)
	}
}

// A request whose rate-limited wait would outlast its context's deadline
// fails at once as a reached deadline (callers test for it), not as a
// limiter error of its own.
func TestRateLimitDeadline(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, echo)
	c, err := New(&Config{Host: fs.URL, QPS: 0.5, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	nodes := ResourceFor[testNode](c, nodeInfo)
	if _, err := nodes.Get(context.Background(), "n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = nodes.Get(ctx, "n")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get with the next token 2 s away and 200 ms left: %v, want context.DeadlineExceeded", err)
	}
	if time.Since(start) > 150*time.Millisecond {
		t.Errorf("Get waited %v before failing, want at once", time.Since(start))
	}
}

func TestResourceLookup(t *testing.T) {
	t.Parallel()
	info, err := InfoFor[api.Lease]()
	if err != nil || info.Kind != "Lease" || info.Group != "coordination.k8s.io" {
		t.Fatalf("InfoFor[Lease] = %+v, %v", info, err)
	}
	if _, err := InfoFor[testPod](); err == nil {
		t.Error("InfoFor of an unregistered type succeeded")
	}
	defer func() {
		if recover() == nil {
			t.Error("Resource of an unregistered type did not panic")
		}
	}()
	c := newTestClient(t, "http://127.0.0.1:1")
	Resource[testPod](c)
}

func TestNewConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no host", Config{}, "host must be set"},
		{"bad scheme", Config{Host: "ftp://x"}, "scheme must be http or https"},
		{"insecure with CA", Config{Host: "https://x", Insecure: true, CAData: []byte("x")}, "insecure flag is not allowed"},
		{"bad CA", Config{Host: "https://x", CAData: []byte("not pem")}, "no PEM certificate"},
		{"cert without key", Config{Host: "https://x", CertData: []byte("x")}, "must both be set"},
	}
	for _, tt := range tests {
		_, err := New(&tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	c, err := New(&Config{Host: "127.0.0.1:6443"})
	if err != nil || c.Host() != "https://127.0.0.1:6443" {
		t.Errorf("bare host: %v, %v", c, err)
	}
}
