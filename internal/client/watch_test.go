package client

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

func streamLines(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			http.Error(w, "not a watch", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		f := w.(http.Flusher)
		for _, l := range lines {
			fmt.Fprintln(w, l)
			f.Flush()
		}
	}
}

func collect[T any](t *testing.T, w Watcher[T]) []Event[T] {
	t.Helper()
	var evs []Event[T]
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatal("watch channel not closed")
		}
	}
}

func TestWatchDecoding(t *testing.T) {
	t.Parallel()
	expired := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (9)","reason":"Expired","code":410}}`
	tests := []struct {
		name  string
		lines []string
		want  []string // "TYPE name rv" or "ERROR code reason"
	}{
		{"all event types then ERROR", []string{
			`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}`,
			`{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"3"}}}`,
			`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"5","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
			`{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"6"}}}`,
			expired,
			`{"type":"ADDED","object":{"metadata":{"name":"never","resourceVersion":"7"}}}`,
		}, []string{"ADDED a 2", "MODIFIED a 3", "BOOKMARK  5", "DELETED a 6", "ERROR 410 Expired"}},
		{"clean end", []string{`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}`},
			[]string{"ADDED a 2"}},
		{"garbage", []string{`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}`, `{not json`},
			[]string{"ADDED a 2", "ERROR 500 InternalError"}},
		{"bad object", []string{`{"type":"ADDED","object":{"metadata":"oops"}}`},
			[]string{"ERROR 500 InternalError"}},
		{"unknown type", []string{`{"type":"WHAT","object":{}}`}, []string{"ERROR 500 InternalError"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeServer(t, streamLines(tt.lines...))
			c := newTestClient(t, fs.URL)
			w, err := ResourceFor[testPod](c, podInfo).Watch(context.Background(), ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range collect(t, w) {
				if ev.Type == api.Error {
					got = append(got, fmt.Sprintf("ERROR %d %s", ev.Status.Code, ev.Status.Reason))
					continue
				}
				if ev.Object.Kind != "Pod" || ev.Object.APIVersion != "v1" {
					t.Errorf("event object without type meta: %+v", ev.Object.TypeMeta)
				}
				got = append(got, fmt.Sprintf("%s %s %s", ev.Type, ev.Object.Name, ev.Object.ResourceVersion))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("events\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWatchStartError(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, apierrors.NewResourceExpired("too old resource version: 1 (9)"))
	})
	c := newTestClient(t, fs.URL)
	_, err := ResourceFor[testPod](c, podInfo).Watch(context.Background(), ListOptions{ResourceVersion: "1"})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("error %v, want Expired", err)
	}
}

// hanging serves one event and then keeps the stream open until the client
// goes away.
func hanging(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintln(w, `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}`)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func TestWatchStopAndCancel(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, hanging)
	c := newTestClient(t, fs.URL)
	pods := ResourceFor[testPod](c, podInfo)

	t.Run("stop", func(t *testing.T) {
		w, err := pods.Watch(context.Background(), ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ev := <-w.ResultChan(); ev.Type != api.Added {
			t.Fatalf("first event %+v", ev)
		}
		w.Stop()
		w.Stop() // idempotent
		if evs := collect(t, w); len(evs) != 0 {
			t.Errorf("events after Stop: %+v", evs)
		}
	})
	t.Run("stop without reading", func(t *testing.T) {
		w, err := pods.Watch(context.Background(), ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the receiver is blocked sending
		w.Stop()
		collect(t, w)
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		w, err := pods.Watch(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		<-w.ResultChan()
		cancel()
		if evs := collect(t, w); len(evs) != 0 {
			t.Errorf("events after cancel: %+v", evs)
		}
	})
}

func TestDynamicWatch(t *testing.T) {
	t.Parallel()
	fs := newFakeServer(t, streamLines(`{"type":"ADDED","object":{"metadata":{"name":"web","resourceVersion":"12345678901234567890"},"spec":{"replicas":3}}}`))
	c := newTestClient(t, fs.URL)
	w, err := c.Dynamic(deplInfo).Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, w)
	if len(evs) != 1 || evs[0].Object.GetName() != "web" || evs[0].Object.GetKind() != "Deployment" {
		t.Fatalf("events %+v", evs)
	}
	if r := evs[0].Object.Object["spec"].(map[string]any)["replicas"]; fmt.Sprint(r) != "3" {
		t.Errorf("replicas %v", r)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	fs := &fakeServer{}
	fs.Server = httptest.NewUnstartedServer(fs.wrap(echo))
	fs.EnableHTTP2 = true
	fs.StartTLS()
	t.Cleanup(fs.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: fs.Certificate().Raw})
	ctx := context.Background()

	c, err := New(&Config{Host: fs.URL, CAData: caPEM})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, Request{Path: "/healthz"}); err != nil {
		t.Fatalf("verified TLS request: %v", err)
	}
	if p := fs.last(t).Proto; p != 2 {
		t.Errorf("protocol HTTP/%d, want HTTP/2", p)
	}

	// Without the CA the server must not be trusted.
	c, err = New(&Config{Host: fs.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Do(ctx, Request{Path: "/healthz"})
	var uae x509.UnknownAuthorityError
	if !errors.As(err, &uae) {
		t.Fatalf("unverified server: error %v, want an unknown authority error", err)
	}

	// A wrong server name fails verification; the right one passes.
	c, _ = New(&Config{Host: fs.URL, CAData: caPEM, ServerName: "wrong.example"})
	if _, err := c.Do(ctx, Request{Path: "/healthz"}); err == nil {
		t.Error("server name override not verified")
	}
	c, _ = New(&Config{Host: fs.URL, CAData: caPEM, ServerName: "example.com"})
	if _, err := c.Do(ctx, Request{Path: "/healthz"}); err != nil {
		t.Errorf("server name example.com (in the test certificate): %v", err)
	}

	c, _ = New(&Config{Host: fs.URL, Insecure: true})
	if _, err := c.Do(ctx, Request{Path: "/healthz"}); err != nil {
		t.Errorf("explicitly insecure request: %v", err)
	}
}
