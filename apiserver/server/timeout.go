package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
)

// DefaultRequestTimeout is kube-apiserver's --request-timeout.
const DefaultRequestTimeout = time.Minute

// timeoutMessage is the Status message of a request cut off by its
// deadline, kube-apiserver's.
const timeoutMessage = "Timeout: request did not complete within the allotted timeout"

// withRequestDeadline gives every request that is not long-running a
// deadline: RequestTimeout after it arrived, or sooner when the client
// asks with ?timeout=DURATION (0 or more than RequestTimeout: the
// default), as kube-apiserver's WithRequestDeadline. A timeout that is not
// a Go duration is a 400.
func (s *Server) withRequestDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.InfoFrom(r.Context())
		if longRunning(r, info) {
			next.ServeHTTP(w, r)
			return
		}
		timeout := s.cfg.RequestTimeout
		if v := r.URL.Query().Get("timeout"); v != "" {
			asked, err := time.ParseDuration(v)
			if err != nil {
				writeError(w, r, apierrors.NewBadRequest("invalid timeout specified in the request URL - "+err.Error()))
				return
			}
			if asked > 0 && asked < timeout {
				timeout = asked
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withTimeout answers a request that is not long-running 504 when its
// deadline passes, as kube-apiserver's WithTimeoutForNonLongRunningRequests:
// the handler runs on its own goroutine, and once the deadline passes
// whatever it writes goes nowhere (http.ErrHandlerTimeout) while it winds
// down through its cancelled context. A handler that already began its
// answer cannot be answered 504: its connection (HTTP/1) or stream
// (HTTP/2) is aborted instead. A panic in the handler is raised again on
// the request's goroutine, for withPanicRecovery.
//
// The handler's headers are its own until it writes: the filters inside
// (audit's Audit-ID, warning's Warning) set them on the goroutine that
// may be cut off.
func (s *Server) withTimeout(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.InfoFrom(r.Context())
		if longRunning(r, info) {
			next.ServeHTTP(w, r)
			return
		}
		tw := &timeoutWriter{w: w, headers: w.Header().Clone(), ctx: r.Context()}
		done := make(chan any, 1)
		inner := r.Clone(r.Context())
		go func() {
			defer func() {
				v := recover()
				if v != nil && v != http.ErrAbortHandler {
					v = &handlerPanic{value: v, stack: debug.Stack()}
				}
				done <- v
			}()
			next.ServeHTTP(tw, inner)
		}()
		select {
		case v := <-done:
			if v != nil {
				// withPanicRecovery answers on w: with the handler's
				// headers (Audit-ID), as without this filter.
				tw.passHeaders()
				panic(v)
			}
			if !tw.cutOff() {
				return
			}
			// The handler ended after the deadline with its answer
			// dropped (an error it wrote because its context ended, say):
			// the request timed out.
		case <-r.Context().Done():
		}
		// The deadline, or the client gone: either way nobody waits for
		// the handler any longer; only the deadline is counted.
		if errors.Is(r.Context().Err(), context.DeadlineExceeded) {
			s.metrics.terminated(r, info, http.StatusGatewayTimeout)
			s.log.Info("request timed out", "method", r.Method, "path", r.URL.Path)
		}
		tw.timeout()
	})
}

// handlerPanic carries a panic of the handler's goroutine to the
// request's, with the stack where it happened, for withPanicRecovery.
type handlerPanic struct {
	value any
	stack []byte
}

// timeoutWriter is the handler's ResponseWriter under withTimeout: its
// headers are the handler's own until it writes, and nothing passes once
// the request timed out.
type timeoutWriter struct {
	w       http.ResponseWriter
	headers http.Header
	// ctx is the request's, with its deadline: an answer the handler
	// begins after it ended is dropped, so that a handler woken by the
	// same deadline (a proxy whose backend call it cut off) cannot race
	// the 504 with its own error.
	ctx context.Context

	mu                                 sync.Mutex
	timedOut, wrote, hijacked, dropped bool
}

func (tw *timeoutWriter) Header() http.Header {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return http.Header{}
	}
	return tw.headers
}

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wrote || tw.hijacked {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// An informational answer (100 Continue, 103 Early Hints) goes out
		// with the headers set so far and begins nothing: the final status
		// follows, or the timeout's 504 if it does not come in time.
		for k, v := range tw.headers {
			tw.w.Header()[k] = v
		}
		tw.w.WriteHeader(code)
		return
	}
	if tw.lateLocked() {
		return
	}
	tw.writeHeaders()
	tw.w.WriteHeader(code)
}

// lateLocked reports whether an answer begun now comes after the
// request's context ended: it is dropped, and the timeout answers.
func (tw *timeoutWriter) lateLocked() bool {
	if !tw.wrote && tw.ctx.Err() != nil {
		tw.dropped = true
	}
	return tw.dropped
}

// cutOff reports whether the handler's answer was dropped because the
// request's context ended first.
func (tw *timeoutWriter) cutOff() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.dropped || (!tw.wrote && !tw.hijacked && tw.ctx.Err() != nil)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if tw.hijacked {
		return 0, http.ErrHijacked
	}
	if tw.lateLocked() {
		return 0, http.ErrHandlerTimeout
	}
	if !tw.wrote {
		tw.writeHeaders()
	}
	return tw.w.Write(p)
}

// passHeaders hands the handler's headers to w when it wrote nothing.
func (tw *timeoutWriter) passHeaders() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.wrote && !tw.hijacked {
		tw.writeHeaders()
	}
}

// writeHeaders copies the handler's headers out, once.
func (tw *timeoutWriter) writeHeaders() {
	for k, v := range tw.headers {
		tw.w.Header()[k] = v
	}
	tw.wrote = true
}

func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return
	}
	if f, ok := tw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's deadlines;
// Flush and Hijack stay behind the timeout.
func (tw *timeoutWriter) Unwrap() http.ResponseWriter { return tw.w }

func (tw *timeoutWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return nil, nil, http.ErrHandlerTimeout
	}
	h, ok := tw.w.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	conn, rw, err := h.Hijack()
	if err == nil {
		tw.hijacked = true
	}
	return conn, rw, err
}

// timeout answers 504 with kube-apiserver's body (its timeout filter
// encodes the Status as it is, without kind or apiVersion), or aborts the
// answer the handler began.
func (tw *timeoutWriter) timeout() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.timedOut = true
	if tw.wrote || tw.hijacked {
		panic(http.ErrAbortHandler)
	}
	st := apierrors.NewTimeout(timeoutMessage, 0).Status()
	st.TypeMeta = api.TypeMeta{}
	tw.w.WriteHeader(http.StatusGatewayTimeout)
	_ = json.NewEncoder(tw.w).Encode(st)
}
