package server

import (
	"net/http"

	"github.com/minik8s/minik8s/apiserver/aggregator"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Aggregator serves the group/versions other servers answer
// (apiregistration.k8s.io APIServices); apiserver/aggregator implements it.
type Aggregator interface {
	// Handler is the proxy of /apis/GROUP/VERSION/..., nil when the
	// group/version is served here.
	Handler(group, version string) http.Handler
	// Groups are the aggregated groups, for /apis and /apis/GROUP.
	Groups() []aggregator.Group
}

var _ Aggregator = (*aggregator.Aggregator)(nil)

// aggregated returns the proxy of a request for an aggregated
// group/version (its discovery document included), or nil.
func (s *Server) aggregated(info *request.Info) http.Handler {
	if s.cfg.Aggregator == nil || info.APIPrefix != "apis" || info.APIGroup == "" || info.APIVersion == "" {
		return nil
	}
	return s.cfg.Aggregator.Handler(info.APIGroup, info.APIVersion)
}

func (s *Server) aggregatedGroups() []aggregator.Group {
	if s.cfg.Aggregator == nil {
		return nil
	}
	return s.cfg.Aggregator.Groups()
}
