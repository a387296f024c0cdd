package proxy

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api/apierrors"
)

// backend echoes what it received as JSON, or serves canned answers on
// some paths.
func backend(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, `<html><body><a href="/rewriteme">x</a><img src="rel.png"><a href="http://elsewhere.example/x">y</a><p>/not-a-link</p></body></html>`)
		case "/gzhtml":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, `<a href="/z">z</a>`)
			zw.Close()
		case "/redirect":
			http.Redirect(w, r, "/elsewhere/", http.StatusFound)
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, `<a href="/rewriteme">stays</a>`)
		case "/upgrade":
			if r.Header.Get("Upgrade") != "echo" {
				http.Error(w, "no upgrade", http.StatusBadRequest)
				return
			}
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
			buf.Flush()
			line, _ := buf.ReadString('\n')
			fmt.Fprint(buf, "echo: "+line)
			buf.Flush()
		default:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{
				"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(body),
				"host": r.Host, "authorization": r.Header.Get("Authorization"),
				"forwardedURI": r.Header.Get("X-Forwarded-Uri"), "forwardedFor": r.Header.Get("X-Forwarded-For"),
			})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// front serves prefix+"/proxy/..." through a Handler to target, as the
// apiserver does for pods/NAME/proxy.
func front(t *testing.T, target *url.URL, rt http.RoundTripper) *httptest.Server {
	t.Helper()
	const prefix = "/api/v1/namespaces/ns/pods/web/proxy"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/ns"), "/"), "/")
		loc := *target
		loc.Path = JoinPreservingTrailingSlash(loc.Path, SubPath(parts, r.URL.Path))
		h := &Handler{Location: &loc, Transport: rt, Responder: func(w http.ResponseWriter, _ *http.Request, err error) {
			code := http.StatusInternalServerError
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				code = int(se.Status().Code)
			}
			http.Error(w, err.Error(), code)
		}}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHandler(t *testing.T) {
	t.Parallel()
	be := backend(t)
	target, _ := url.Parse(be.URL)
	target.Scheme = "" // the handler defaults to http, as kube's
	fe := front(t, target, NewTransport())
	const prefix = "/api/v1/namespaces/ns/pods/web/proxy"
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, fe.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer not-for-the-pod") // the filter chain removes it in the apiserver
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	t.Run("every method with path, query and body", func(t *testing.T) {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			resp, body := do(m, prefix+"/some/path/?a=1&b=2", "payload")
			var got map[string]string
			if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: %d %s", m, resp.StatusCode, body)
			}
			if got["method"] != m || got["path"] != "/some/path/" || got["query"] != "a=1&b=2" || got["body"] != "payload" {
				t.Errorf("%s: backend saw %v", m, got)
			}
			if got["forwardedURI"] != prefix+"/some/path/" || got["forwardedFor"] == "" {
				t.Errorf("%s: forwarded headers %v", m, got)
			}
		}
		resp, body := do("HEAD", prefix+"/x", "")
		if resp.StatusCode != 200 || body != "" {
			t.Errorf("HEAD: %d %q", resp.StatusCode, body)
		}
	})
	t.Run("empty path redirects GET and HEAD only", func(t *testing.T) {
		for _, m := range []string{"GET", "HEAD"} {
			resp, _ := do(m, prefix+"?method="+m, "")
			if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != prefix+"/?method="+m {
				t.Errorf("%s: %d Location %q", m, resp.StatusCode, resp.Header.Get("Location"))
			}
		}
		resp, body := do("POST", prefix+"?method=POST", "")
		if resp.StatusCode != 200 || !strings.Contains(body, `"method":"POST"`) || !strings.Contains(body, `"path":"/"`) || !strings.Contains(body, `"forwardedURI":"`+prefix+`/"`) {
			t.Errorf("POST: %d %s", resp.StatusCode, body)
		}
	})
	t.Run("HTML links and Location rewritten, other bodies not", func(t *testing.T) {
		resp, body := do("GET", prefix+"/html", "")
		want := `<html><body><a href="` + prefix + `/rewriteme">x</a><img src="rel.png"><a href="http://elsewhere.example/x">y</a><p>/not-a-link</p></body></html>`
		if body != want {
			t.Errorf("HTML:\n got %s\nwant %s", body, want)
		}
		if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("CORS header passed on: %q", v)
		}
		resp, body = do("GET", prefix+"/gzhtml", "")
		if body != `<a href="`+prefix+`/z">z</a>` {
			t.Errorf("gzip HTML: %d %q", resp.StatusCode, body)
		}
		resp, _ = do("GET", prefix+"/redirect", "")
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != prefix+"/elsewhere/" {
			t.Errorf("redirect: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		_, body = do("GET", prefix+"/text", "")
		if body != `<a href="/rewriteme">stays</a>` {
			t.Errorf("text body changed: %q", body)
		}
	})
	t.Run("upgrade spliced through", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(fe.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET %s/upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n", prefix)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade answer: %v %v", resp, err)
		}
		fmt.Fprint(conn, "hello\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "echo: hello\n" {
			t.Errorf("after the upgrade: %q %v", line, err)
		}
	})
	t.Run("unreachable backend is 503", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		dead := front(t, &url.URL{Host: addr}, NewTransport())
		resp, err := http.Get(dead.URL + prefix + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := "error trying to reach service: dial tcp " + addr + ": connect: connection refused"
		if resp.StatusCode != http.StatusServiceUnavailable || strings.TrimSpace(string(b)) != want {
			t.Errorf("got %d %q, want 503 %q", resp.StatusCode, b, want)
		}
	})
}
