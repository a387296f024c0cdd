package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/apiserver/request"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	watchers *prometheus.GaugeVec
	// terminations counts the requests the apiserver cut short in
	// self-defence: 429 over the in-flight limit, 504 past the timeout.
	terminations *prometheus.CounterVec
	// readOnly and mutating are apiserver_current_inflight_requests' two
	// series, kept by withMaxInFlight.
	readOnly, mutating *watermarkGauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out by verb, group, resource, subresource and HTTP code.",
		}, []string{"verb", "group", "resource", "subresource", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, group, resource and subresource (watches excluded).",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"verb", "group", "resource", "subresource"}),
		watchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_longrunning_requests",
			Help: "Number of open watch streams per group and resource (served as verb WATCH).",
		}, []string{"group", "resource"}),
		terminations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_terminations_total",
			Help: "Number of requests which apiserver terminated in self-defense.",
		}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"}),
	}
	inflight := newInflightCollector()
	reg.MustRegister(m.requests, m.latency, m.watchers, m.terminations, inflight)
	m.readOnly, m.mutating = inflight.readOnly, inflight.mutating
	return m
}

// terminated counts a request cut short with code, labelled as
// kube-apiserver labels apiserver_request_terminations_total: the HTTP
// method in upper case (GET of a collection as LIST, a server-side apply
// as APPLY), its scope, a non-resource request by its path in subresource.
// Watches and connections are never cut short, so never counted.
func (m *metrics) terminated(r *http.Request, info *request.Info, code int) {
	verb, scope := reportedVerb(r, info)
	group, version, resource, sub := "", "", "", r.URL.Path
	if info != nil && info.IsResourceRequest {
		group, version, resource, sub = info.APIGroup, info.APIVersion, info.Resource, info.Subresource
	}
	m.terminations.WithLabelValues(verb, group, version, resource, sub, scope, "apiserver", strconv.Itoa(code)).Inc()
}

// connectSubresources are reported as verb CONNECT (kube's
// validConnectRequests).
var connectSubresources = map[string]bool{"log": true, "exec": true, "portforward": true, "attach": true, "proxy": true}

// reportedVerb is the verb label kube-apiserver's request metrics carry and
// the request's scope: the HTTP method in upper case, a GET of a
// collection as LIST, a watch as WATCH, a server-side apply as APPLY, a
// connection to a pod or node subresource as CONNECT.
func reportedVerb(r *http.Request, info *request.Info) (verb, scope string) {
	switch {
	case info == nil:
	case info.Name != "" || info.Verb == "create":
		scope = "resource"
	case info.Namespace != "":
		scope = "namespace"
	case info.IsResourceRequest:
		scope = "cluster"
	}
	verb = strings.ToUpper(r.Method)
	switch {
	case info != nil && info.IsResourceRequest && connectSubresources[info.Subresource]:
		verb = "CONNECT"
	case info != nil && info.Verb == "watch":
		verb = "WATCH"
	case (verb == http.MethodGet || verb == http.MethodHead) && scope != "resource" && scope != "":
		verb = "LIST"
	case verb == http.MethodHead:
		verb = http.MethodGet
	case verb == http.MethodPatch && r.Header.Get("Content-Type") == "application/apply-patch+yaml":
		verb = "APPLY"
	}
	return verb, scope
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush keeps watch streaming working through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// withMetrics counts and times every request it passes (apiserver_request_total,
// apiserver_request_duration_seconds), the in-flight limit's 429s included.
func (s *Server) withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.InfoFrom(r.Context())
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(rec, r)
		verb, _ := reportedVerb(r, info)
		resource := info.Resource
		if !info.IsResourceRequest {
			resource = ""
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		s.metrics.requests.WithLabelValues(verb, info.APIGroup, resource, info.Subresource, strconv.Itoa(code)).Inc()
		if !longRunning(r, info) {
			elapsed := time.Since(start)
			s.metrics.latency.WithLabelValues(verb, info.APIGroup, resource, info.Subresource).Observe(elapsed.Seconds())
			if elapsed > time.Second || code >= 500 {
				s.log.Info("slow or failed request", "verb", verb, "path", r.URL.Path, "code", code, "elapsed", elapsed)
			}
		}
	})
}
