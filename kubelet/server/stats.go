package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/kubelet/stats"
)

// StatsProvider measures the node and its pods; kubelet/stats implements it.
type StatsProvider interface {
	Summary(ctx context.Context) (*stats.Summary, error)
	WriteResourceMetrics(ctx context.Context, w io.Writer) error
}

var _ StatsProvider = (*stats.Provider)(nil)

// serveStatsSummary answers /stats/summary (nodes/stats): the statsapi
// Summary as JSON.
func (s *Server) serveStatsSummary(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Stats == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable, "stats are not available on this kubelet"))
		return
	}
	sum, err := s.cfg.Stats.Summary(r.Context())
	if err != nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusInternalServerError, api.StatusReasonInternalError, "failed to get summary stats: "+err.Error()))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(sum)
}

// serveResourceMetrics answers /metrics/resource (nodes/metrics) in the
// Prometheus text format.
func (s *Server) serveResourceMetrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Stats == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable, "resource metrics are not available on this kubelet"))
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if err := s.cfg.Stats.WriteResourceMetrics(r.Context(), w); err != nil {
		s.log.Debug("writing resource metrics", "err", err)
	}
}
