package warning

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

// recorder adds Warning headers to a response not yet written.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	seen   map[string]bool
}

type ctxKey struct{}

// WithRecorder returns ctx carrying a recorder that adds warnings to h, the
// header of the response the request will get.
func WithRecorder(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, ctxKey{}, &recorder{header: h, seen: map[string]bool{}})
}

// Add records text as a warning of the request ctx belongs to; without a
// recorder (the apiserver's own writes) it does nothing. Safe for
// concurrent use; the same text is sent once.
func Add(ctx context.Context, text string) {
	r, ok := ctx.Value(ctxKey{}).(*recorder)
	if !ok || text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[text] {
		return
	}
	r.seen[text] = true
	r.header.Add("Warning", Header(text))
}

// Header is the Warning header value of text: `299 - "text"`, with
// backslashes and quotes escaped and control characters dropped.
func Header(text string) string {
	var b strings.Builder
	b.WriteString(`299 - "`)
	for _, c := range text {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 && c != '\t' || c == 0x7f:
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Filter puts a recorder for each request's response in its context.
func Filter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithRecorder(r.Context(), w.Header())))
	})
}
