package server

import (
	"net/http"

	"github.com/minik8s/minik8s/apiserver/aggregator"
	"github.com/minik8s/minik8s/apiserver/discovery"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Aggregator serves the group/versions other servers answer
// (apiregistration.k8s.io APIServices); apiserver/aggregator implements it.
type Aggregator interface {
	// Handler is the proxy of /apis/GROUP/VERSION/..., nil when the
	// group/version is served here.
	Handler(group, version string) http.Handler
	// Discovery is what remote APIServices serve, for /apis and
	// /apis/GROUP: each group version's aggregated discovery entry as
	// last fetched, Stale when it could not be.
	Discovery() []discovery.Remote
	// Priorities are every APIService's priorities, which order the
	// groups and versions of discovery.
	Priorities() map[discovery.GroupVersion]discovery.Priority
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
