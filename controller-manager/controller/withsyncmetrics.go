package controller

import "github.com/prometheus/client_golang/prometheus"

// WithSyncMetrics registers the sync metrics of controller name with reg
// and has c record every sync in them. It is the last step of the
// constructors whose NewController (used by tests, which want no metrics)
// builds the controller without them:
//
//	return controller.WithSyncMetrics(NewController(...), ctx.Metrics, "namespace")
func WithSyncMetrics[C interface {
	Interface
	SetMetrics(*SyncMetrics)
}](c C, reg prometheus.Registerer, name string) (Interface, error) {
	m, err := NewSyncMetrics(reg, name)
	if err != nil {
		return nil, err
	}
	c.SetMetrics(m)
	return c, nil
}
