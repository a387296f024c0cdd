package daemon

import (
	"context"
	"errors"
)

// InformerSyncCheck is the readiness check of a daemon whose work reads
// informer caches: /readyz fails until synced returns nil. /healthz and
// /livez leave it out, so a slow first list does not get the daemon
// restarted by its liveness probe.
func InformerSyncCheck(synced func() error) Check {
	return Check{Name: "informer-sync", Ready: true, Func: synced}
}

// ServeAndRun runs a daemon's work beside serve, the server of its
// health and metrics endpoints (nil when it serves none), until ctx ends
// or either stops. A failing serve cancels work's context and its error
// is the result; otherwise work's error is, except the cancellation
// itself (a daemon told to stop stops without error). Both have returned
// when ServeAndRun does: work must return once its context ends.
func ServeAndRun(ctx context.Context, serve, work func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serveErr := make(chan error, 1)
	go func() {
		var err error
		if serve != nil {
			err = serve(ctx)
		}
		if err != nil {
			cancel()
		}
		serveErr <- err
	}()
	err := work(ctx)
	cancel()
	if serr := <-serveErr; serr != nil {
		return serr
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
