package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/daemon"
)

// TestServeAndRun: which error a daemon's start-up returns when its work
// or its endpoints' server stops, and that neither outlives the other.
func TestServeAndRun(t *testing.T) {
	errServe, errWork := errors.New("port taken"), errors.New("work failed")
	// untilDone returns err once the context ends.
	untilDone := func(err error) func(context.Context) error {
		return func(ctx context.Context) error { <-ctx.Done(); return err }
	}
	for _, tt := range []struct {
		name        string
		serve, work func(context.Context) error
		cancel      bool // the caller's context ends
		want        error
	}{
		{"work fails", untilDone(nil), func(context.Context) error { return errWork }, false, errWork},
		{"work fails, wrapped", untilDone(nil), func(context.Context) error { return fmt.Errorf("serve: %w", errWork) }, false, errWork},
		{"serve fails and stops work", func(context.Context) error { return errServe }, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, false, errServe},
		{"serve fails while work fails too", func(context.Context) error { return errServe }, untilDone(errWork), false, errServe},
		{"stopped: cancellation is no error", untilDone(nil), func(ctx context.Context) error { <-ctx.Done(); return fmt.Errorf("serve DNS: %w", ctx.Err()) }, true, nil},
		{"stopped without endpoints", nil, untilDone(context.Canceled), true, nil},
		{"work done, serve stopped", untilDone(nil), func(context.Context) error { return nil }, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			done := make(chan error, 1)
			go func() { done <- daemon.ServeAndRun(ctx, tt.serve, tt.work) }()
			select {
			case err := <-done:
				if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
					t.Errorf("ServeAndRun = %v, want %v", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ServeAndRun did not return")
			}
		})
	}
}

// TestInformerSyncCheck: the check fails /readyz only, until synced.
func TestInformerSyncCheck(t *testing.T) {
	synced := false
	c := daemon.InformerSyncCheck(func() error {
		if !synced {
			return errors.New("caches not synced")
		}
		return nil
	})
	if c.Name != "informer-sync" || !c.Ready {
		t.Fatalf("check %q, ready-only %v; want informer-sync, ready-only", c.Name, c.Ready)
	}
	if c.Func() == nil {
		t.Error("healthy before the caches synced")
	}
	synced = true
	if err := c.Func(); err != nil {
		t.Errorf("after sync: %v", err)
	}
}
