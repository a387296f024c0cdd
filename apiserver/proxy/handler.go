package proxy

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// flushInterval is how often a streamed answer is flushed to the client
// (kube's proxy flushes every 200 ms).
const flushInterval = 200 * time.Millisecond

// ErrorResponder writes err, a Status error or any other (a 500), as the
// answer.
type ErrorResponder func(w http.ResponseWriter, r *http.Request, err error)

// Handler proxies requests to Location over Transport, as kube's
// UpgradeAwareHandler does for the proxy subresources: the request's
// method, headers, query and body go on; an upgrade (WebSocket, SPDY) is
// spliced through; ".../proxy" is redirected to ".../proxy/" for GET and
// HEAD; the answer comes back as the backend sent it, but for the
// rewriting of its Location and HTML links (rewritingTransport).
type Handler struct {
	// Location is the backend URL: scheme (http when empty), host and
	// path; the request's query is added.
	Location  *url.URL
	Transport http.RoundTripper
	Responder ErrorResponder
	Log       *slog.Logger
}

// ServeHTTP proxies r.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	loc := *h.Location
	if loc.Scheme == "" {
		loc.Scheme = "http"
	}
	log := h.Log
	if log == nil {
		log = slog.Default()
	}
	if isUpgradeRequest(r) {
		h.serveUpgrade(w, r, loc, log)
		return
	}
	loc.RawQuery = r.URL.RawQuery
	if !strings.HasSuffix(loc.Path, "/") && strings.HasSuffix(r.URL.Path, "/") {
		loc.Path += "/"
	}
	// An empty path is redirected to the directory (kubernetes#4958):
	// the relative links of the page then resolve under the proxy.
	if loc.Path == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		q := ""
		if r.URL.RawQuery != "" {
			q = "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", r.URL.Path+"/"+q)
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	suffix := h.Location.Path
	if strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(suffix, "/") {
		suffix += "/"
	}
	rt := &rewritingTransport{
		scheme: r.URL.Scheme, host: r.URL.Host,
		pathPrepend: strings.TrimSuffix(r.URL.Path, suffix),
		rt:          h.Transport, log: log,
	}
	rp := &httputil.ReverseProxy{
		// As kube's proxy: the URL is the backend's, the Host header
		// the client's, X-Forwarded-For appended by ReverseProxy.
		Director: func(out *http.Request) {
			out.URL = &loc
			if loc.Path == "" {
				// A request line needs a path (as kube's
				// single-host ReverseProxy joins "" and "").
				u := loc
				u.Path = "/"
				out.URL = &u
			}
			if _, ok := out.Header["User-Agent"]; !ok {
				out.Header.Set("User-Agent", "")
			}
		},
		Transport:     rt,
		FlushInterval: flushInterval,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandler:  h.Responder,
	}
	rp.ServeHTTP(w, r)
}

// serveUpgrade proxies an upgrade request to loc as it is (no redirect,
// no rewriting) and splices the two connections once the backend
// switches protocols; a backend that refuses has its answer passed on.
// Not reaching the backend is kube's "error dialing backend".
func (h *Handler) serveUpgrade(w http.ResponseWriter, r *http.Request, loc url.URL, log *slog.Logger) {
	loc.RawQuery = r.URL.RawQuery
	rp := &httputil.ReverseProxy{
		Director: func(out *http.Request) {
			out.URL = &loc
			if _, ok := out.Header["User-Agent"]; !ok {
				out.Header.Set("User-Agent", "")
			}
		},
		Transport:     h.Transport,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.Responder(w, r, fmt.Errorf("error dialing backend: %v", err))
		},
	}
	rp.ServeHTTP(w, r)
}

// isUpgradeRequest says the request asks to switch protocols (its
// Connection header names Upgrade).
func isUpgradeRequest(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		if strings.Contains(strings.ToLower(v), "upgrade") {
			return true
		}
	}
	return false
}

// NewTransport is the transport to pods and services: HTTP/1.1 (an
// upgrade does not exist in HTTP/2), TLS without verification (pods are
// reached by IP and have no certificate for it, as with kube-apiserver's
// proxy transport).
func NewTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       newInsecureTLS(),
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   25,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
