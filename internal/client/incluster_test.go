package client

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A token file rotated by the kubelet is read again after a minute; a
// failed read keeps the last token.
func TestBearerTokenFileRotates(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(&Config{Host: srv.URL, BearerTokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c.tokenFile.now = func() time.Time { return now }
	get := func() {
		if _, err := c.Do(t.Context(), Request{Path: "/version"}); err != nil {
			t.Fatal(err)
		}
	}
	get()
	if err := os.WriteFile(file, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(30 * time.Second)
	get() // still the cached one
	now = now.Add(31 * time.Second)
	get() // re-read
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	get() // unreadable: the last one
	want := []string{"Bearer one", "Bearer one", "Bearer two", "Bearer two"}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("requests %q", seen)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d sent %q, want %q", i, seen[i], want[i])
		}
	}
}

func TestInClusterConfigOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := InClusterConfig(); !errors.Is(err, ErrNotInCluster) {
		t.Errorf("err %v, want ErrNotInCluster", err)
	}
}
