package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
)

// syncBuffer is a bytes.Buffer safe for concurrent Write and read.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// events decodes every line of out strictly into Events.
func events(t *testing.T, out string) []Event {
	t.Helper()
	var evs []Event
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var ev Event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("invalid audit line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

var alice = &request.User{Name: "alice", UID: "u-1", Groups: []string{"devs", "system:authenticated"}}

// withContext plays the part of authentication and request-info parsing.
func withContext(u *request.User, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := request.WithInfo(r.Context(), request.ParseInfo(r))
		if u != nil {
			ctx = request.WithUser(ctx, u)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func TestEventFields(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	b := NewBackend(&out)
	h := withContext(alice, Filter(b)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"Deployment"}`)
	})))
	req := httptest.NewRequest(http.MethodPost, "/apis/apps/v1/namespaces/ns1/deployments/web/scale?dryRun=All", nil)
	req.RemoteAddr = "10.1.2.3:5555"
	req.Header.Set("User-Agent", "kubectl-lite/v1")
	req.Header.Set("X-Forwarded-For", "192.0.2.7, 10.1.2.3")
	rec := httptest.NewRecorder()
	before := time.Now().Add(-time.Second)
	h.ServeHTTP(rec, req)

	evs := events(t, out.String())
	if len(evs) != 1 {
		t.Fatalf("got %d events, want 1: %s", len(evs), out.String())
	}
	ev := evs[0]
	if ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" || ev.Level != "Metadata" || ev.Stage != "ResponseComplete" {
		t.Errorf("type/level/stage: %+v", ev)
	}
	if ev.AuditID == "" || rec.Header().Get("Audit-Id") != ev.AuditID {
		t.Errorf("auditID %q, response header %q", ev.AuditID, rec.Header().Get("Audit-Id"))
	}
	if ev.RequestURI != "/apis/apps/v1/namespaces/ns1/deployments/web/scale?dryRun=All" || ev.Verb != "create" {
		t.Errorf("requestURI %q verb %q", ev.RequestURI, ev.Verb)
	}
	if ev.User.Username != "alice" || ev.User.UID != "u-1" || strings.Join(ev.User.Groups, ",") != "devs,system:authenticated" {
		t.Errorf("user %+v", ev.User)
	}
	if strings.Join(ev.SourceIPs, ",") != "192.0.2.7,10.1.2.3" {
		t.Errorf("sourceIPs %v", ev.SourceIPs)
	}
	if ev.UserAgent != "kubectl-lite/v1" {
		t.Errorf("userAgent %q", ev.UserAgent)
	}
	want := ObjectReference{Resource: "deployments", Namespace: "ns1", Name: "web", APIGroup: "apps", APIVersion: "v1", Subresource: "scale"}
	if ev.ObjectRef == nil || *ev.ObjectRef != want {
		t.Errorf("objectRef %+v, want %+v", ev.ObjectRef, want)
	}
	if ev.ResponseStatus == nil || ev.ResponseStatus.Code != 201 || ev.ResponseStatus.Status != "" {
		t.Errorf("responseStatus %+v", ev.ResponseStatus)
	}
	if ev.RequestReceivedTimestamp.Before(before) || ev.StageTimestamp.Before(ev.RequestReceivedTimestamp.Time) {
		t.Errorf("timestamps %v %v", ev.RequestReceivedTimestamp, ev.StageTimestamp)
	}
	// The raw line has Kubernetes' field names.
	for _, k := range []string{`"auditID":`, `"requestURI":`, `"sourceIPs":`, `"objectRef":{`, `"responseStatus":{"metadata":{},"code":201}`, `"requestReceivedTimestamp":`, `"stageTimestamp":`, `"user":{"username":"alice"`} {
		if !strings.Contains(out.String(), k) {
			t.Errorf("line lacks %s: %s", k, out.String())
		}
	}
}

func TestFailuresAreRecorded(t *testing.T) {
	t.Parallel()
	forbidden := func(w http.ResponseWriter, r *http.Request) {
		data, _ := json.Marshal(apierrors.NewForbidden(apierrors.GroupResource{Resource: "pods"}, "", errors.New(`User "alice" cannot list resource "pods"`)).Status())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(data)
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		code    int32
		status  string
		reason  api.StatusReason
		message string
	}{
		{"403 Status", forbidden, 403, "Failure", "Forbidden", `cannot list resource "pods"`},
		{"500 plain text", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, 500, "Failure", "", ""},
		{"204 nothing written", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }, 204, "", "", ""},
		{"no write at all", func(w http.ResponseWriter, r *http.Request) {}, 200, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out syncBuffer
			h := withContext(alice, Filter(NewBackend(&out))(c.handler))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil))
			evs := events(t, out.String())
			if len(evs) != 1 {
				t.Fatalf("got %d events", len(evs))
			}
			st := evs[0].ResponseStatus
			if st.Code != c.code || st.Status != c.status || st.Reason != c.reason || !strings.Contains(st.Message, c.message) {
				t.Fatalf("responseStatus %+v", st)
			}
			if evs[0].Verb != "list" || evs[0].ObjectRef.Namespace != "default" {
				t.Fatalf("event %+v", evs[0])
			}
		})
	}
}

// TestOutsideAuthentication: Filter outermost sees the 401 (empty user) and,
// with Capture inside authentication, the user and info of the others.
func TestOutsideAuthentication(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	authn := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer good" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), alice)))
		})
	}
	h := Filter(NewBackend(&out))(authn(Capture(inner)))
	bad := httptest.NewRequest("DELETE", "/api/v1/nodes/n1", nil)
	h.ServeHTTP(httptest.NewRecorder(), bad)
	good := httptest.NewRequest("DELETE", "/api/v1/nodes/n1", nil)
	good.Header.Set("Authorization", "Bearer good")
	h.ServeHTTP(httptest.NewRecorder(), good)

	evs := events(t, out.String())
	if len(evs) != 2 {
		t.Fatalf("got %d events", len(evs))
	}
	if evs[0].ResponseStatus.Code != 401 || evs[0].User.Username != "" || len(evs[0].User.Groups) != 0 {
		t.Errorf("401 event %+v", evs[0])
	}
	if !strings.Contains(out.String(), `"user":{}`) {
		t.Errorf("401 user should be {}: %s", out.String())
	}
	if evs[0].Verb != "delete" || evs[0].ObjectRef == nil || evs[0].ObjectRef.Name != "n1" {
		t.Errorf("401 event parsed no request info: %+v", evs[0])
	}
	if evs[1].ResponseStatus.Code != 200 || evs[1].User.Username != "alice" {
		t.Errorf("authenticated event %+v", evs[1])
	}

	// Filter nested in Filter records once.
	out2 := &syncBuffer{}
	b := NewBackend(out2)
	Filter(b)(withContext(alice, Filter(b)(inner))).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods", nil))
	if evs := events(t, out2.String()); len(evs) != 1 || evs[0].User.Username != "alice" {
		t.Fatalf("nested filters: %s", out2.String())
	}
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := withContext(alice, Filter(NewBackend(&out))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})))
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/api/v1/namespaces/ns%d/pods/p%d", i, i), nil))
		}()
	}
	wg.Wait()
	evs := events(t, out.String())
	if len(evs) != n {
		t.Fatalf("got %d events, want %d", len(evs), n)
	}
	ids := map[string]bool{}
	names := map[string]bool{}
	for _, ev := range evs {
		ids[ev.AuditID] = true
		names[ev.ObjectRef.Namespace+"/"+ev.ObjectRef.Name] = true
	}
	if len(ids) != n || len(names) != n {
		t.Fatalf("%d distinct auditIDs, %d distinct objects, want %d", len(ids), len(names), n)
	}
}

// TestWatchFlushesAndRecordsAtEnd streams through the wrapper over a real
// connection: the client sees the first event before the handler ends, and
// the audit event is written only when the watch ends.
func TestWatchFlushesAndRecordsAtEnd(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	release := make(chan struct{})
	handlerErr := make(chan error, 1)
	h := withContext(alice, Filter(NewBackend(&out))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// Unwrap lets ResponseController reach the connection's writer.
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			handlerErr <- fmt.Errorf("SetWriteDeadline through the wrapper: %w", err)
			return
		}
		if _, ok := w.(http.Flusher); !ok {
			handlerErr <- errors.New("wrapper is not an http.Flusher")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{}}`+"\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, `{"type":"DELETED","object":{}}`+"\n")
		handlerErr <- nil
	})))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before srv.Close, which waits for the handler

	// Headers and the first line must both arrive while the handler is
	// still blocked, which only a working Flush makes happen.
	type firstLine struct {
		resp  *http.Response
		lines *bufio.Reader
		line  string
		err   error
	}
	first := make(chan firstLine, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/api/v1/namespaces/default/pods?watch=true")
		if err != nil {
			first <- firstLine{err: err}
			return
		}
		lines := bufio.NewReader(resp.Body)
		l, err := lines.ReadString('\n')
		first <- firstLine{resp, lines, l, err}
	}()
	var fl firstLine
	select {
	case fl = <-first:
		if fl.err != nil || !strings.Contains(fl.line, "ADDED") {
			t.Fatalf("first line %q, %v", fl.line, fl.err)
		}
	case err := <-handlerErr:
		t.Fatalf("handler: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("first watch event not flushed through the audit wrapper")
	}
	defer fl.resp.Body.Close()
	lines := fl.lines
	if out.String() != "" {
		t.Fatalf("audit event written before the watch ended: %s", out.String())
	}
	unblock()
	if err := <-handlerErr; err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(lines)
	if !strings.Contains(string(rest), "DELETED") {
		t.Fatalf("rest of stream %q", rest)
	}
	fl.resp.Body.Close()
	srv.Close() // waits for the handler, so the event is written
	evs := events(t, out.String())
	if len(evs) != 1 || evs[0].Verb != "watch" || evs[0].ResponseStatus.Code != 200 {
		t.Fatalf("watch events: %s", out.String())
	}
}

func TestPanicIsRecordedAndRepanics(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := withContext(alice, Filter(NewBackend(&out))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("handler bug")
	})))
	func() {
		defer func() {
			if v := recover(); v != "handler bug" {
				t.Errorf("recovered %v, want the handler's panic", v)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods", nil))
	}()
	evs := events(t, out.String())
	if len(evs) != 1 || evs[0].Stage != StagePanic || evs[0].ResponseStatus.Code != 500 {
		t.Fatalf("panic event: %s", out.String())
	}
}

func TestAuditIDHeader(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := Filter(NewBackend(&out))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req := httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("Audit-ID", "trace-123")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	bad := httptest.NewRequest("GET", "/healthz", nil)
	bad.Header.Set("Audit-ID", "has space\n")
	h.ServeHTTP(httptest.NewRecorder(), bad)
	evs := events(t, out.String())
	if evs[0].AuditID != "trace-123" || rec.Header().Get("Audit-ID") != "trace-123" {
		t.Errorf("client audit id not kept: %+v", evs[0])
	}
	if evs[1].AuditID == "has space\n" || len(evs[1].AuditID) != 36 {
		t.Errorf("bad client audit id kept: %q", evs[1].AuditID)
	}
	if evs[0].ObjectRef != nil || evs[0].Verb != "get" {
		t.Errorf("non-resource request: %+v", evs[0])
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorsAreLoggedNotReturned(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	b := NewBackend(failingWriter{})
	b.log = slog.New(slog.NewTextHandler(&logs, nil))
	h := Filter(b)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "fine") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))
	if rec.Code != 200 || rec.Body.String() != "fine" {
		t.Fatalf("request affected by audit failure: %d %q", rec.Code, rec.Body.String())
	}
	if !strings.Contains(logs.String(), "disk full") {
		t.Fatalf("write error not logged: %q", logs.String())
	}
}

func TestFileBackend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "audit.log")
	b, err := NewFileBackend(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Process(&Event{Kind: EventKind, AuditID: "a"})
	b.Process(&Event{Kind: EventKind, AuditID: "b"})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.Process(&Event{AuditID: "after-close"}) // logged, not written, no panic
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if evs := events(t, string(data)); len(evs) != 2 || evs[1].AuditID != "b" {
		t.Fatalf("file content %q", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}

	// Appends across restarts.
	b, _ = NewFileBackend(path, 0)
	b.Process(&Event{AuditID: "c"})
	_ = b.Close()
	data, _ = os.ReadFile(path)
	if evs := events(t, string(data)); len(evs) != 3 {
		t.Fatalf("after reopen: %q", data)
	}

	if _, err := NewFileBackend("", 0); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := NewFileBackend(filepath.Join(dir, "x.log"), -1); err == nil {
		t.Error("negative size accepted")
	}
}

func TestFileBackendRotates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	b, err := NewFileBackend(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	ann := map[string]string{"pad": strings.Repeat("x", 1000)}
	for i := range 1500 { // about 1.5 MB
		b.Process(&Event{Kind: EventKind, AuditID: fmt.Sprint(i), Annotations: ann})
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) < 2 {
		t.Fatalf("no rotation: %v", entries)
	}
	total := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 1<<20 {
			t.Errorf("%s is %d bytes, over 1 MB", e.Name(), len(data))
		}
		total += len(events(t, string(data)))
	}
	if total != 1500 {
		t.Fatalf("%d events across files, want 1500", total)
	}
}

// TestHijack: an upgraded connection (exec, port-forward) is handed over
// through the wrapper and recorded as 101.
func TestHijack(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := withContext(alice, Filter(NewBackend(&out))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack through the wrapper: %v", err)
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\nhello")
		_ = brw.Flush()
	})))
	srv := httptest.NewServer(h)
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/namespaces/default/pods/web/exec?command=sh", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	if resp.StatusCode != 101 || string(body) != "hello" {
		t.Fatalf("upgrade response %d %q", resp.StatusCode, body)
	}
	evs := events(t, out.String())
	if len(evs) != 1 || evs[0].ResponseStatus.Code != 101 || evs[0].ObjectRef.Subresource != "exec" {
		t.Fatalf("hijacked request event: %s", out.String())
	}
}
