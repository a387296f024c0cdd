package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/apiserver/request"
)

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	watchers *prometheus.GaugeVec
	inflight *prometheus.GaugeVec
	// readOnly and mutating are inflight's two series, looked up once.
	readOnly, mutating prometheus.Gauge
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
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Number of requests being served, by kind (readOnly or mutating).",
		}, []string{"request_kind"}),
	}
	reg.MustRegister(m.requests, m.latency, m.watchers, m.inflight)
	m.readOnly, m.mutating = m.inflight.WithLabelValues("readOnly"), m.inflight.WithLabelValues("mutating")
	return m
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
// apiserver_request_duration_seconds) and keeps apiserver_current_inflight_requests.
func (s *Server) withMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.InfoFrom(r.Context())
		kind := "readOnly"
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			kind = "mutating"
		}
		g := s.metrics.readOnly
		if kind == "mutating" {
			g = s.metrics.mutating
		}
		g.Inc()
		defer g.Dec()
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(rec, r)
		verb := info.Verb
		resource := info.Resource
		if !info.IsResourceRequest {
			resource = ""
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		s.metrics.requests.WithLabelValues(verb, info.APIGroup, resource, info.Subresource, strconv.Itoa(code)).Inc()
		if verb != "watch" && !isLongRunning(r, info) {
			elapsed := time.Since(start)
			s.metrics.latency.WithLabelValues(verb, info.APIGroup, resource, info.Subresource).Observe(elapsed.Seconds())
			if elapsed > time.Second || code >= 500 {
				s.log.Info("slow or failed request", "verb", verb, "path", r.URL.Path, "code", code, "elapsed", elapsed)
			}
		}
	})
}
