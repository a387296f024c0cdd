package controller

import (
	"context"
	"log/slog"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/prometheus/client_golang/prometheus"
)

// Context is what the controller-manager hands every controller. Informers
// must come from Factory (so controllers share one watch per kind); the
// manager starts the factory after every controller's constructor ran.
type Context struct {
	Client *client.Client
	// ClientConfig is Client's configuration, for controllers that act
	// under an identity of their own (a service account's token) against
	// the same server.
	ClientConfig *client.Config
	Factory      *informer.Factory
	// Events makes each controller's recorder:
	// Events.RecorderFor("replicaset-controller").
	Events *events.Broadcaster
	Logger *slog.Logger
	// Metrics is where controllers register their own collectors; work
	// queue metrics are registered by the manager.
	Metrics prometheus.Registerer
	// Options holds the controller-manager flags controllers read.
	Options Options
	// RootCA is the cluster CA bundle (PEM) pods trust the apiserver with:
	// --root-ca-file, else the CA of the controller-manager's kubeconfig.
	RootCA []byte
}

// Interface is a running controller.
type Interface interface {
	// Run processes work with the given number of workers until ctx ends.
	// The manager has started the informer factory before calling Run;
	// Run should still wait for the informers it needs to sync.
	Run(ctx context.Context, workers int) error
}

// Constructor builds a controller from the shared context. It registers
// the informers and event handlers it needs but starts nothing.
type Constructor func(ctx *Context) (Interface, error)
