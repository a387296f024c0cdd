package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// healthRoutes serves root (/healthz, /livez or /readyz), running every
// check, to any authenticated user: kube's system:public-info-viewer and
// system:discovery grant these three paths to everyone.
func (s *Server) healthRoutes(r chi.Router, root string, checks []HealthCheck) {
	r.Get(root, s.health(checks))
}

// healthCheckRoutes serves root/NAME, running the one check named (ping
// among them), as kube-apiserver's healthz.InstallPathHandler: "ok", or
// 500 with "internal server error: " and the reason. They are among
// apiRoutes, behind authorization: kube grants root/* only in
// system:monitoring, as a single check's answer may say more about the
// cluster (the etcd client's error, say) than the roots' "reason withheld".
func (s *Server) healthCheckRoutes(r chi.Router, root string, checks []HealthCheck) {
	r.Get(root+"/ping", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	for _, c := range checks {
		r.Get(root+"/"+c.Name, func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := c.Check(ctx); err != nil {
				s.log.Warn("health check failed", "check", c.Name, "path", r.URL.Path, "err", err)
				http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, "ok")
		})
	}
}

// readyChecks are /readyz's checks: the live ones and the ready ones.
func (s *Server) readyChecks() []HealthCheck {
	return append(append([]HealthCheck{}, s.cfg.LiveChecks...), s.cfg.ReadyChecks...)
}
