package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestImpersonating: the derived client sends its identity's headers, the
// base client none, and both share one rate limiter and HTTP client.
func TestImpersonating(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	base, err := New(&Config{Host: srv.URL, QPS: 5, Burst: 7})
	if err != nil {
		t.Fatal(err)
	}
	node := base.Impersonating(Impersonation{UserName: "system:node:n1", Groups: []string{"system:nodes"}})
	if node.limiter != base.limiter || node.http != base.http {
		t.Error("the impersonating client must share the base client's limiter and HTTP client")
	}
	for _, c := range []*Client{base, node} {
		if _, err := c.Do(context.Background(), Request{Path: "/version"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("requests: %d", len(got))
	}
	if v := got[0].Get("Impersonate-User"); v != "" {
		t.Errorf("base client sent Impersonate-User %q", v)
	}
	if v, g := got[1].Get("Impersonate-User"), got[1].Values("Impersonate-Group"); v != "system:node:n1" || len(g) != 1 || g[0] != "system:nodes" {
		t.Errorf("impersonating client sent user %q groups %q", v, g)
	}
}
