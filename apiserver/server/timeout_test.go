package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// timeoutChain is the timeout's part of HandlerChain around h.
func timeoutChain(timeout time.Duration, h http.Handler) http.Handler {
	s := New(Config{RequestTimeout: timeout, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return withRequestInfo(s.withRequestDeadline(s.withTimeout(h)))
}

// TestTimeout covers what the integration test cannot reach: a handler
// that began its answer before the deadline has it aborted rather than
// finished or turned into a 504, one that writes after the deadline writes
// nowhere, and long-running requests are never cut.
func TestTimeout(t *testing.T) {
	t.Parallel()
	wroteLate := make(chan error, 1)
	tests := []struct {
		name, path string
		handler    http.HandlerFunc
		wantCode   int
		wantBody   string
		wantAbort  bool
	}{
		{name: "answer begun, then the deadline: aborted", path: "/api/v1/namespaces",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, `{"items":[`)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				time.Sleep(50 * time.Millisecond)
				_, _ = io.WriteString(w, `]}`)
			},
			wantCode: http.StatusOK, wantAbort: true},
		{name: "nothing written by the deadline: 504, later writes go nowhere", path: "/api/v1/namespaces",
			handler: func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
				time.Sleep(50 * time.Millisecond)
				_, err := io.WriteString(w, "late")
				wroteLate <- err
			},
			wantCode: http.StatusGatewayTimeout, wantBody: `"message":"Timeout: request did not complete within the allotted timeout"`},
		{name: "an error written as the deadline wakes the handler: 504", path: "/api/v1/namespaces",
			handler: func(w http.ResponseWriter, r *http.Request) {
				// A proxy whose backend call the deadline cut off answers
				// at once; the timeout's 504 must win every time.
				<-r.Context().Done()
				http.Error(w, "backend gone", http.StatusBadGateway)
			},
			wantCode: http.StatusGatewayTimeout, wantBody: `"message":"Timeout: request did not complete within the allotted timeout"`},
		{name: "an informational answer begins nothing: 504 at the deadline", path: "/api/v1/namespaces",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "</x>; rel=preload")
				w.WriteHeader(http.StatusEarlyHints)
				<-r.Context().Done()
			},
			wantCode: http.StatusGatewayTimeout, wantBody: `"message":"Timeout: request did not complete within the allotted timeout"`},
		{name: "a watch outlives the timeout", path: "/api/v1/namespaces?watch=true",
			handler: func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(300 * time.Millisecond)
				if r.Context().Err() != nil {
					http.Error(w, "cut", http.StatusInternalServerError)
					return
				}
				_, _ = io.WriteString(w, "streamed")
			},
			wantCode: http.StatusOK, wantBody: "streamed"},
		{name: "pods/log is long-running too", path: "/api/v1/namespaces/default/pods/p/log",
			handler: func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(300 * time.Millisecond)
				_, _ = io.WriteString(w, "logs")
			},
			wantCode: http.StatusOK, wantBody: "logs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(timeoutChain(100*time.Millisecond, tc.handler))
			defer srv.Close()
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantCode {
				t.Errorf("code %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if tc.wantAbort {
				if err == nil {
					t.Errorf("the begun answer was finished: %q", body)
				}
				return
			}
			if err != nil || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body %q (%v), want %q", body, err, tc.wantBody)
			}
		})
	}
	t.Run("late write", func(t *testing.T) {
		t.Parallel()
		select {
		case err := <-wroteLate:
			if err != http.ErrHandlerTimeout {
				t.Errorf("a write after the timeout: %v, want http.ErrHandlerTimeout", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the timed-out handler never wrote")
		}
	})
}

// TestWatermarkGauge: apiserver_current_inflight_requests reports the
// most requests served at once in the last second, as kube-apiserver's.
func TestWatermarkGauge(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	g := &watermarkGauge{now: func() time.Time { return now }}
	step := func(d time.Duration, set ...int) {
		now = now.Add(d)
		for _, v := range set {
			g.set(v)
		}
	}
	for _, tc := range []struct {
		name  string
		after time.Duration
		set   []int
		want  float64
	}{
		{"peak within the second", 0, []int{1, 2, 3, 2, 1}, 3},
		{"the peak of the second before still shows", time.Second, []int{1}, 3},
		{"two seconds on: only the last second", time.Second, nil, 1},
		{"a quiet stretch holds the value", 5 * time.Second, nil, 1},
		{"down to zero", 0, []int{0}, 1},
		{"the second before had 1 at first", time.Second, nil, 1},
		{"then nothing", time.Second, nil, 0},
	} {
		step(tc.after, tc.set...)
		if got := g.value(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTimeoutPanic: a panic on the handler's goroutine reaches
// withPanicRecovery as the handler's own value, answered 500 with that
// value and no stack (which only the log gets).
func TestTimeoutPanic(t *testing.T) {
	t.Parallel()
	s := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h := s.withPanicRecovery(withRequestInfo(s.withRequestDeadline(s.withTimeout(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), `"message":"Internal error occurred: panic: boom"`) {
		t.Errorf("%d %s, want 500 'Internal error occurred: panic: boom'", resp.StatusCode, body)
	}
}
