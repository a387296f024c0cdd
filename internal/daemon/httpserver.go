package daemon

import (
	"net/http"
	"time"
)

// The limits every daemon's HTTP server has, kube-apiserver's
// (k8s.io/apiserver's secure serving) and the kubelet's.
const (
	// IdleTimeout closes a keep-alive connection with no request for this
	// long (HTTP/1.1 and HTTP/2), matching http.DefaultTransport's idle
	// timeout on the client side.
	IdleTimeout = 90 * time.Second
	// ReadHeaderTimeout bounds reading a request's headers: just shy of
	// kube-apiserver's upper bound on a request's duration.
	ReadHeaderTimeout = 32 * time.Second
	// MaxHeaderBytes bounds a request's headers (1 MiB).
	MaxHeaderBytes = 1 << 20
)

// NewHTTPServer returns a server of h with IdleTimeout, ReadHeaderTimeout
// and MaxHeaderBytes; the caller adds TLS and an error log.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, IdleTimeout: IdleTimeout, ReadHeaderTimeout: ReadHeaderTimeout, MaxHeaderBytes: MaxHeaderBytes}
}
