package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/apiserver/request"
)

// tooManyRequestsMessage is kube-apiserver's answer to a request over the
// in-flight limit: plain text, as its max-in-flight filter writes it with
// http.Error (client-go turns a 429 without a Status into one and retries
// after Retry-After).
const tooManyRequestsMessage = "Too many requests, please try again later."

// retryAfterSeconds is the Retry-After of a 429, kube-apiserver's.
const retryAfterSeconds = 1

// systemMasters is the group no limit applies to: kube-apiserver always
// answers a super-user (or its own loopback clients).
const systemMasters = "system:masters"

// withMaxInFlight is kube-apiserver's max-in-flight filter (what it runs
// with --enable-priority-and-fairness=false): at most MaxRequestsInFlight
// read-only (get, list) and MaxMutatingRequestsInFlight other requests are
// served at once, 0 meaning no limit; the one more is answered 429 with
// Retry-After: 1 at once, not queued. Long-running requests (watches,
// exec, logs, proxies) are neither limited nor counted. A member of
// system:masters is served even over the limit, without taking a slot.
// Health checks are not exempt, as in kube-apiserver: they are read-only
// requests like any other.
//
// It keeps apiserver_current_inflight_requests{request_kind} as
// kube-apiserver does: the most requests of each kind served at once in
// the last second.
//
// The limits are the server's, shared by the chains of every listener, as
// kube-apiserver has one chain.
func (s *Server) withMaxInFlight(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.InfoFrom(r.Context())
		if longRunning(r, info) {
			next.ServeHTTP(w, r)
			return
		}
		limit := s.mutating
		if info != nil && (info.Verb == "get" || info.Verb == "list") {
			limit = s.readOnly
		}
		if !limit.acquire() {
			if !isSystemMaster(r) {
				s.metrics.terminated(r, info, http.StatusTooManyRequests)
				w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
				http.Error(w, tooManyRequestsMessage, http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		defer limit.release()
		next.ServeHTTP(w, r)
	})
}

func isSystemMaster(r *http.Request) bool {
	u, ok := request.UserFrom(r.Context())
	if !ok {
		return false
	}
	for _, g := range u.Groups {
		if g == systemMasters {
			return true
		}
	}
	return false
}

// inflightLimit counts one kind of request being served against its limit
// (0: none) and reports the most served at once in the last second
// (kube-apiserver's watermark) through its gauge, without a goroutine of
// its own: the window rolls over when a request starts or ends and when
// the metric is read.
type inflightLimit struct {
	limit int
	gauge *watermarkGauge

	mu sync.Mutex
	n  int
}

func newInflightLimit(limit int, g *watermarkGauge) *inflightLimit {
	return &inflightLimit{limit: limit, gauge: g}
}

// acquire takes a slot, or reports false when all are taken.
func (l *inflightLimit) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limit > 0 && l.n >= l.limit {
		return false
	}
	l.n++
	l.gauge.set(l.n)
	return true
}

func (l *inflightLimit) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	l.gauge.set(l.n)
}

// watermarkGauge is one series of apiserver_current_inflight_requests: the
// highest value set during the last whole second, or during the current
// one when that is higher.
type watermarkGauge struct {
	mu sync.Mutex
	// cur is the value now; second is the Unix second max and prev refer
	// to: max is the highest value in that second, prev in the one before.
	cur, max, prev int
	second         int64
	now            func() time.Time
}

func (g *watermarkGauge) set(v int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.roll()
	g.cur = v
	if v > g.max {
		g.max = v
	}
}

func (g *watermarkGauge) value() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.roll()
	return float64(max(g.max, g.prev))
}

// roll starts a new second when one began: a second without a change held
// cur throughout.
func (g *watermarkGauge) roll() {
	sec := g.now().Unix()
	if sec == g.second {
		return
	}
	if sec == g.second+1 {
		g.prev = g.max
	} else {
		g.prev = g.cur
	}
	g.second, g.max = sec, g.cur
}

// inflightCollector exports the two watermark gauges under kube-apiserver's
// name and label.
type inflightCollector struct {
	desc               *prometheus.Desc
	readOnly, mutating *watermarkGauge
}

func newInflightCollector() *inflightCollector {
	return &inflightCollector{
		desc: prometheus.NewDesc("apiserver_current_inflight_requests",
			"Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
			[]string{"request_kind"}, nil),
		readOnly: &watermarkGauge{now: time.Now},
		mutating: &watermarkGauge{now: time.Now},
	}
}

func (c *inflightCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *inflightCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, c.readOnly.value(), "readOnly")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, c.mutating.value(), "mutating")
}
