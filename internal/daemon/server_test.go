package daemon

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

func TestHealthChecks(t *testing.T) {
	s := NewServer("", nil)
	synced := false
	s.AddCheck(Check{Name: "ping", Func: func() error { return nil }})
	s.AddCheck(Check{Name: "informer-sync", Ready: true, Func: func() error {
		if !synced {
			return errors.New("caches not synced")
		}
		return nil
	}})
	h := s.Handler()
	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	code, body := get(t, h, "/readyz")
	if code != 500 || !strings.Contains(body, "[-]informer-sync failed: caches not synced") || !strings.Contains(body, "[+]ping ok") {
		t.Fatalf("/readyz before sync = %d %q", code, body)
	}
	synced = true
	if code, body := get(t, h, "/readyz?verbose"); code != 200 || !strings.Contains(body, "[+]informer-sync ok") {
		t.Fatalf("/readyz after sync = %d %q", code, body)
	}
	if code, body := get(t, h, "/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics = %d, missing go collector", code)
	}
}
