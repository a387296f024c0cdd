package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/minik8s/minik8s/apiserver/snapshot"
)

// startSnapshots runs the scheduled etcd snapshots (--etcd-snapshot-*), as
// k3s does: on by default, into "snapshots" beside the data dir, named
// after this host.
func (a *APIServer) startSnapshots(ctx context.Context) error {
	if a.opts.EtcdSnapshotSchedule == "" {
		return nil
	}
	sched, err := snapshot.ParseSchedule(a.opts.EtcdSnapshotSchedule)
	if err != nil {
		return fmt.Errorf("--etcd-snapshot-schedule: %w", err)
	}
	dir := a.opts.EtcdSnapshotDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(a.opts.DataDir)), "snapshots")
	}
	node, err := os.Hostname()
	if err != nil || node == "" {
		node = "apiserver"
	}
	s := &snapshot.Scheduled{Schedule: sched, Retention: a.opts.EtcdSnapshotRetention, Dir: dir, Node: node,
		Saver: a.backend, Log: a.log.With("component", "etcd-snapshot")}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		s.Run(ctx)
	}()
	return nil
}
