package controller

import (
	"log/slog"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Builder is the NewController of a controller made from the shared
// client and informer factory, an event recorder, a logger and its sync
// metrics (tests call it directly, with metrics or nil).
type Builder[C Interface] func(c *client.Client, factory *informer.Factory, rec events.Recorder, log *slog.Logger, m *SyncMetrics) (C, error)

// FromFactory is the manager's Constructor for such a controller: its sync
// metrics are labelled name, its events come from component
// ("deployment-controller").
func FromFactory[C Interface](name, component string, build Builder[C]) Constructor {
	return func(ctx *Context) (Interface, error) {
		m, err := NewSyncMetrics(ctx.Metrics, name)
		if err != nil {
			return nil, err
		}
		c, err := build(ctx.Client, ctx.Factory, ctx.Events.RecorderFor(component), ctx.Logger, m)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}
