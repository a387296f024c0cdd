package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// response is a decoded HTTP reply.
type response struct {
	Code int
	Body []byte
}

// obj decodes the body as a JSON object.
func (r response) obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
	return m
}

type tclient struct {
	t    testing.TB
	base string
	hc   *http.Client
}

func newClient(t testing.TB, s *apiservertest.Server) *tclient {
	return &tclient{t: t, base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}
}

func (c *tclient) do(method, path string, body any, contentType string) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{Code: resp.StatusCode, Body: data}
}

// must runs a request and fails unless it returns code.
func (c *tclient) must(code int, method, path string, body any, contentType ...string) map[string]any {
	c.t.Helper()
	ct := ""
	if len(contentType) > 0 {
		ct = contentType[0]
	}
	r := c.do(method, path, body, ct)
	if r.Code != code {
		c.t.Fatalf("%s %s: got %d, want %d: %s", method, path, r.Code, code, r.Body)
	}
	return r.obj(c.t)
}

// watchEvent is one decoded watch line.
type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

type watchStream struct {
	t      testing.TB
	events chan watchEvent
	cancel context.CancelFunc
	done   chan struct{}
}

// watch opens a watch on path (query included, watch=true added).
func (c *tclient) watch(path string) *watchStream {
	c.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path+sep+"watch=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("watch %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("watch %s: %d %s", path, resp.StatusCode, data)
	}
	ws := &watchStream{t: c.t, events: make(chan watchEvent, 1000), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ws.done)
		defer close(ws.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var ev watchEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ws.t.Errorf("bad watch line %q: %v", sc.Bytes(), err)
				return
			}
			ws.events <- ev
		}
	}()
	c.t.Cleanup(ws.stop)
	return ws
}

func (w *watchStream) stop() {
	w.cancel()
	<-w.done
}

// next returns the next non-BOOKMARK event, failing after timeout.
func (w *watchStream) next(timeout time.Duration) watchEvent {
	w.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				w.t.Fatalf("watch closed while waiting for an event")
			}
			if ev.Type == "BOOKMARK" {
				continue
			}
			return ev
		case <-deadline:
			w.t.Fatalf("no watch event within %v", timeout)
		}
	}
}

// expectNone fails if a non-BOOKMARK event arrives within d.
func (w *watchStream) expectNone(d time.Duration) {
	w.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				return
			}
			if ev.Type != "BOOKMARK" {
				w.t.Fatalf("unexpected event %s %v", ev.Type, name(ev.Object))
			}
		case <-deadline:
			return
		}
	}
}

func meta(o map[string]any) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

func name(o map[string]any) string {
	n, _ := meta(o)["name"].(string)
	return n
}

func rv(o map[string]any) string {
	r, _ := meta(o)["resourceVersion"].(string)
	return r
}

func configMap(name string, labels map[string]string, data map[string]string) map[string]any {
	m := map[string]any{"name": name}
	if labels != nil {
		m["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": m, "data": data}
}

func pod(name string, containers ...string) map[string]any {
	var cs []any
	for _, c := range containers {
		cs = append(cs, map[string]any{"name": c, "image": "busybox:1.36"})
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"containers": cs}}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
