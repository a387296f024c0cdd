package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// toBeDeletedTaint marks a node the cluster autoscaler is removing:
// kube-proxy's /healthz then fails, so load balancers drain it.
const toBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// proxyHealth is kube-proxy's health state (pkg/proxy/healthcheck): the
// time of the last rule write and of the oldest change still waiting for
// one. Unhealthy once a change has waited longer than timeout.
type proxyHealth struct {
	timeout time.Duration
	now     func() time.Time
	// node returns this kube-proxy's Node (nil: not known).
	node func() *api.Node

	mu           sync.Mutex
	lastUpdated  time.Time
	oldestQueued time.Time
}

func newProxyHealth(timeout time.Duration, node func() *api.Node) *proxyHealth {
	return &proxyHealth{timeout: timeout, now: time.Now, node: node}
}

// Updated records a completed rule write.
func (h *proxyHealth) Updated() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.oldestQueued = time.Time{}
	h.lastUpdated = h.now()
}

// QueuedUpdate records a change the rules do not have yet.
func (h *proxyHealth) QueuedUpdate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.oldestQueued.IsZero() {
		h.oldestQueued = h.now()
	}
}

// healthBody is kube-proxy's JSON (healthcheck.ProxyHealth).
type healthBody struct {
	LastUpdated  time.Time                `json:"lastUpdated"`
	CurrentTime  time.Time                `json:"currentTime"`
	NodeEligible *bool                    `json:"nodeEligible,omitempty"`
	Healthy      bool                     `json:"healthy"`
	Status       map[string]proxierHealth `json:"status,omitempty"`
}

type proxierHealth struct {
	LastUpdated time.Time `json:"lastUpdated"`
	Healthy     bool      `json:"healthy"`
}

// health is the state of the (single, IPv4) proxier.
func (h *proxyHealth) health() healthBody {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	b := healthBody{CurrentTime: now, LastUpdated: h.lastUpdated, Healthy: true, Status: map[string]proxierHealth{}}
	if !h.lastUpdated.IsZero() {
		ok := h.oldestQueued.IsZero() || now.Sub(h.oldestQueued) < h.timeout
		b.Healthy = ok
		b.Status[string(api.IPv4Protocol)] = proxierHealth{LastUpdated: h.lastUpdated, Healthy: ok}
	}
	return b
}

// nodeEligible: the node exists, is not being deleted, and is not
// tainted for removal by the cluster autoscaler.
func (h *proxyHealth) nodeEligible() bool {
	n := h.node()
	if n == nil || n.DeletionTimestamp != nil {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == toBeDeletedTaint {
			return false
		}
	}
	return true
}

// Handler serves /healthz (the proxier is healthy and the node eligible)
// and /livez (the proxier is healthy), 200 or 503 with the JSON body, as
// kube-proxy's health server.
func (h *proxyHealth) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		b := h.health()
		eligible := h.nodeEligible()
		b.NodeEligible = &eligible
		h.write(w, b, b.Healthy && eligible)
	})
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		b := h.health()
		h.write(w, b, b.Healthy)
	})
	return mux
}

func (h *proxyHealth) write(w http.ResponseWriter, b healthBody, ok bool) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if ok {
		// A healthy answer reports now, as kube-proxy's does.
		b.LastUpdated = h.now()
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	out, _ := json.Marshal(b)
	_, _ = w.Write(out)
}

// syncWatcher is a Registerer that hands collectors on and keeps the
// service proxy's counter of rule writes, so that health learns of every
// completed write without the proxy calling back.
type syncWatcher struct {
	prometheus.Registerer
	mu      sync.Mutex
	counter prometheus.Counter
}

// syncCounterName is the service proxy's counter of completed writes.
const syncCounterName = "kubeproxy_sync_proxy_rules_total"

func (s *syncWatcher) Register(c prometheus.Collector) error {
	if err := s.Registerer.Register(c); err != nil {
		return err
	}
	if ctr, ok := c.(prometheus.Counter); ok {
		ch := make(chan *prometheus.Desc, 4)
		ctr.Describe(ch)
		close(ch)
		for d := range ch {
			if descName(d) == syncCounterName {
				s.mu.Lock()
				s.counter = ctr
				s.mu.Unlock()
			}
		}
	}
	return nil
}

func (s *syncWatcher) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := s.Register(c); err != nil {
			panic(err)
		}
	}
}

// writes is the counter's value (0 before the proxy registered it).
func (s *syncWatcher) writes() float64 {
	s.mu.Lock()
	c := s.counter
	s.mu.Unlock()
	if c == nil {
		return 0
	}
	var m dto.Metric
	if err := c.Write(&m); err != nil || m.Counter == nil {
		return 0
	}
	return m.Counter.GetValue()
}

// descName reads fqName out of a Desc (it has no accessor).
func descName(d *prometheus.Desc) string {
	_, rest, ok := strings.Cut(d.String(), `fqName: "`)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, `"`)
	return name
}
