package staticpods

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

const urlPod = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: busybox}]
`

const urlPodList = `{"apiVersion": "v1", "kind": "PodList", "items": [
 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}]}`

// TestURLSource is kube's HTTP pod source: the headers of
// --manifest-url-header are sent; one Pod or a PodList is read, named for
// the node and marked config.source http with a UID that hashes the URL
// (not the node and file); an unchanged answer changes nothing; a failed
// fetch (status, bad data) keeps the pods; an empty answer removes them.
func TestURLSource(t *testing.T) {
	var mu sync.Mutex
	status, body := http.StatusOK, urlPod
	var gotHeader http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		gotHeader = r.Header.Clone()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	serve := func(s int, b string) {
		mu.Lock()
		status, body = s, b
		mu.Unlock()
	}
	src := NewURL(URLOptions{URL: srv.URL, NodeName: "node-1", Header: http.Header{"Authorization": {"Bearer x"}, "X-Multi": {"a", "b"}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()

	pods, changed, err := src.Fetch(ctx)
	if err != nil || !changed || len(pods) != 1 {
		t.Fatalf("first fetch: %d pods, changed %v, err %v", len(pods), changed, err)
	}
	if gotHeader.Get("Authorization") != "Bearer x" || strings.Join(gotHeader.Values("X-Multi"), ",") != "a,b" {
		t.Errorf("headers sent %v", gotHeader)
	}
	p := pods[0]
	if p.Name != "web-node-1" || p.Namespace != "default" || p.Spec.NodeName != "node-1" {
		t.Errorf("pod %s/%s on %q, want default/web-node-1 on node-1", p.Namespace, p.Name, p.Spec.NodeName)
	}
	if p.Annotations[ConfigSourceAnnotationKey] != HTTPSource || p.Annotations[ConfigHashAnnotationKey] != string(p.UID) || p.Annotations[ConfigFirstSeenAnnotationKey] == "" {
		t.Errorf("annotations %v", p.Annotations)
	}
	filePod, err := Decode([]byte(urlPod), srv.URL, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if filePod.UID == p.UID {
		t.Error("a URL's pod has the UID of a file's: the hash must name the URL, not the node and file")
	}
	if again, err := DecodeList([]byte(urlPod), srv.URL, "node-1"); err != nil || again[0].UID != p.UID {
		t.Errorf("decoding the same answer again gave UID %v (err %v), want %s", again, err, p.UID)
	}

	if _, changed, err := src.Fetch(ctx); changed || err != nil {
		t.Errorf("unchanged answer: changed %v, err %v", changed, err)
	}
	serve(http.StatusOK, urlPodList)
	pods, changed, err = src.Fetch(ctx)
	if err != nil || !changed || len(pods) != 2 || pods[0].Name != "a-node-1" || pods[0].Namespace != "ns" || pods[1].Name != "b-node-1" {
		t.Fatalf("PodList: %v, changed %v, err %v", pods, changed, err)
	}
	serve(http.StatusInternalServerError, "oops")
	if _, changed, err := src.Fetch(ctx); changed || err == nil || !strings.Contains(err.Error(), "500 Internal Server Error") {
		t.Errorf("500: changed %v, err %v; want the pods kept and the status", changed, err)
	}
	serve(http.StatusOK, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	if _, changed, err := src.Fetch(ctx); changed || err == nil || !strings.Contains(err.Error(), "couldn't parse as single or multiple pods") {
		t.Errorf("a ConfigMap: changed %v, err %v; want the pods kept and kube's message", changed, err)
	}
	serve(http.StatusOK, `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": []}}`)
	if _, changed, err := src.Fetch(ctx); changed || err == nil || !strings.Contains(err.Error(), "invalid pod") {
		t.Errorf("an invalid pod: changed %v, err %v; want the pods kept and the validation error", changed, err)
	}
	serve(http.StatusOK, "")
	pods, changed, err = src.Fetch(ctx)
	if !changed || len(pods) != 0 || err == nil || !strings.Contains(err.Error(), "zero-length data received from") {
		t.Errorf("empty answer: %d pods, changed %v, err %v; want none, changed, and kube's message", len(pods), changed, err)
	}
}

// TestURLSourceRun: Run reads the URL at once and again every period, and
// hands over only changes.
func TestURLSourceRun(t *testing.T) {
	var mu sync.Mutex
	body := urlPod
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	src := NewURL(URLOptions{URL: srv.URL, NodeName: "n", Period: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	updates := make(chan int, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = src.Run(ctx, func(ps []*api.Pod) { updates <- len(ps) }) }()
	if n := <-updates; n != 1 {
		t.Fatalf("first update: %d pods, want 1", n)
	}
	select {
	case n := <-updates:
		t.Fatalf("an update (%d pods) with nothing changed", n)
	case <-time.After(100 * time.Millisecond):
	}
	mu.Lock()
	body = urlPodList
	mu.Unlock()
	select {
	case n := <-updates:
		if n != 2 {
			t.Fatalf("after the change: %d pods, want 2", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no update after the URL's answer changed")
	}
}
