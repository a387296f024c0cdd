package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/protobuf"
	"github.com/minik8s/minik8s/apiserver/request"
)

// maxStatusBody bounds how much of a failed response is kept to read its
// Status (reason, message).
const maxStatusBody = 16 << 10

// record is the event being built for one request, shared through the
// context so that an inner Capture can complete it.
type record struct {
	user         *request.User
	impersonated *request.User
	info         *request.Info
	annotations  map[string]string
}

// AddAnnotation records key=value in the event of an enclosing Filter, as
// kube-apiserver's audit.AddAuditAnnotation (the TokenRequest API notes
// the credential ID it issued). Without a Filter it does nothing.
func AddAnnotation(ctx context.Context, key, value string) {
	if rec, ok := ctx.Value(ctxKey{}).(*record); ok {
		if rec.annotations == nil {
			rec.annotations = map[string]string{}
		}
		rec.annotations[key] = value
	}
}

// LogImpersonatedUser records, in the event of an enclosing Filter, the
// user a request acts as through impersonation; the event's user stays
// the one who authenticated, as in kube-apiserver.
func LogImpersonatedUser(ctx context.Context, u *request.User) {
	if rec, ok := ctx.Value(ctxKey{}).(*record); ok {
		rec.impersonated = u
	}
}

type ctxKey struct{}

// Filter records one event for every request that passes through it, after
// the response is complete (for a watch, when the stream ends). It sets the
// Audit-ID response header. The user and request info come from the context
// when Filter runs inside authentication and request-info parsing, or from
// an inner Capture; the request info is parsed from the URL otherwise. A
// request that failed authentication is recorded with an empty user ({}),
// as Kubernetes does.
//
// A nil b gives a filter that passes requests through untouched.
func Filter(b *Backend) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if b == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, nested := r.Context().Value(ctxKey{}).(*record); nested {
				// An outer Filter records this request already.
				Capture(next).ServeHTTP(w, r)
				return
			}
			received := time.Now()
			id := auditID(r)
			rec := &record{}
			w.Header().Set(HeaderAuditID, id)
			rw := &responseWriter{ResponseWriter: w}
			completed := false
			defer func() {
				stage := StageResponseComplete
				var panicked any
				if !completed {
					// A panic (or runtime.Goexit, which recovers nil) ended
					// the handler; the request is recorded either way.
					if panicked = recover(); panicked != nil {
						stage = StagePanic
					}
				}
				ev := newEvent(r, rec, rw, id, stage, received)
				if panicked != nil && rw.code == 0 {
					// Nothing was answered yet: the panic recovery
					// outside answers 500, recorded as kube-apiserver does.
					ev.ResponseStatus.Reason = api.StatusReasonInternalError
					ev.ResponseStatus.Message = fmt.Sprintf("APIServer panic'd: %v", panicked)
				}
				b.Process(ev)
				if panicked != nil {
					panic(panicked)
				}
			}()
			next.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), ctxKey{}, rec)))
			completed = true
		})
	}
}

// Capture copies the user and request info of the context into the event of
// an enclosing Filter. Put it inside authentication when Filter is outside
// it; without an enclosing Filter it does nothing.
func Capture(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := r.Context().Value(ctxKey{}).(*record); ok {
			if u, ok := request.UserFrom(r.Context()); ok {
				rec.user = u
			}
			if i, ok := request.InfoFrom(r.Context()); ok {
				rec.info = i
			}
		}
		next.ServeHTTP(w, r)
	})
}

// auditID takes the client's Audit-ID header, as kube-apiserver does (so a
// request can be followed across servers), when it is a sane token;
// otherwise a new UUID.
func auditID(r *http.Request) string {
	if id := r.Header.Get(HeaderAuditID); id != "" && len(id) <= 128 && printable(id) {
		return id
	}
	return uuid.NewString()
}

func printable(s string) bool {
	for _, c := range s {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

func newEvent(r *http.Request, rec *record, rw *responseWriter, id, stage string, received time.Time) *Event {
	ctx := r.Context()
	u, ok := request.UserFrom(ctx)
	if !ok {
		u = rec.user
	}
	info, ok := request.InfoFrom(ctx)
	if !ok {
		info = rec.info
	}
	if info == nil {
		info = request.ParseInfo(r)
	}
	ev := &Event{
		Kind:                     EventKind,
		APIVersion:               EventAPIVersion,
		Level:                    LevelMetadata,
		AuditID:                  id,
		Stage:                    stage,
		RequestURI:               r.RequestURI,
		Verb:                     info.Verb,
		SourceIPs:                sourceIPs(r),
		UserAgent:                r.UserAgent(),
		RequestReceivedTimestamp: api.MicroTime{Time: received.UTC().Truncate(time.Microsecond)},
		StageTimestamp:           api.NowMicro(),
	}
	if ev.RequestURI == "" {
		ev.RequestURI = r.URL.RequestURI()
	}
	if rec.impersonated != nil {
		// The context's user is the impersonated one; the event's user is
		// who authenticated.
		u = rec.user
		i := rec.impersonated
		ev.ImpersonatedUser = &UserInfo{Username: i.Name, UID: i.UID, Groups: i.Groups, Extra: i.Extra}
	}
	if u != nil {
		ev.User = UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	if info.IsResourceRequest {
		ev.ObjectRef = &ObjectReference{Resource: info.Resource, Namespace: info.Namespace, Name: info.Name,
			APIGroup: info.APIGroup, APIVersion: info.APIVersion, Subresource: info.Subresource}
	}
	ev.ResponseStatus = rw.status(stage == StagePanic)
	if len(rec.annotations) > 0 {
		ev.Annotations = maps.Clone(rec.annotations)
	}
	return ev
}

// sourceIPs lists X-Forwarded-For, then X-Real-Ip, then the connection's
// address, without duplicates, like Kubernetes' utilnet.SourceIPs. The
// headers are client-supplied: they are recorded, never trusted.
func sourceIPs(r *http.Request) []string {
	var ips []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if net.ParseIP(s) == nil {
			return
		}
		for _, have := range ips {
			if have == s {
				return
			}
		}
		ips = append(ips, s)
	}
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, part := range strings.Split(v, ",") {
			add(part)
		}
	}
	add(r.Header.Get("X-Real-Ip"))
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	add(host)
	return ips
}

// responseWriter records the status code and, for failures, the start of
// the body to read its Status. It keeps Flush working for watches and
// exposes the wrapped writer through Unwrap (http.ResponseController).
type responseWriter struct {
	http.ResponseWriter
	code     int
	hijacked bool
	body     []byte
}

func (w *responseWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 || code == http.StatusSwitchingProtocols {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.code >= 400 && len(w.body) < maxStatusBody {
		n := min(len(p), maxStatusBody-len(w.body))
		w.body = append(w.body, p[:n]...)
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends buffered data to the client, through any wrappers below.
func (w *responseWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection over (upgrades for exec, attach, port-forward);
// the request is then recorded with 101 Switching Protocols unless a code was
// written before.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return conn, rw, err
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var (
	_ http.Flusher  = (*responseWriter)(nil)
	_ http.Hijacker = (*responseWriter)(nil)
)

// status is the responseStatus of the event: the code, and for a failure
// answered with a Kubernetes Status its status, reason and message.
func (w *responseWriter) status(panicked bool) *api.Status {
	code := w.code
	switch {
	case panicked && code == 0:
		code = http.StatusInternalServerError
	case code == 0 && w.hijacked:
		code = http.StatusSwitchingProtocols
	case code == 0:
		// Nothing written: net/http answers 200.
		code = http.StatusOK
	}
	st := &api.Status{Code: int32(code)}
	if code >= 400 {
		if s, err := parseStatus(w.body, w.Header().Get("Content-Type")); err == nil {
			st.Status, st.Reason, st.Message = s.Status, s.Reason, s.Message
		} else {
			st.Status = api.StatusFailure
		}
	}
	return st
}

func parseStatus(body []byte, contentType string) (*api.Status, error) {
	switch {
	case strings.HasPrefix(contentType, protobuf.ContentType):
		js, _, err := protobuf.Decode(body)
		if err != nil {
			return nil, err
		}
		body = js
	case !strings.Contains(contentType, "json"):
		return nil, fmt.Errorf("content type %q", contentType)
	}
	var s api.Status
	if err := json.Unmarshal(body, &s); err != nil {
		return nil, err
	}
	if s.Kind != "Status" {
		return nil, errors.New("not a Status")
	}
	return &s, nil
}
