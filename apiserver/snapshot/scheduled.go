package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/minik8s/minik8s/apiserver/etcd"
)

// Defaults of the scheduled snapshots (k3s's).
const (
	DefaultSchedule  = "0 */12 * * *"
	DefaultRetention = 5
	// Prefix starts every scheduled snapshot's name.
	Prefix = "etcd-snapshot-"
)

// ParseSchedule parses a standard five-field cron expression (or a
// descriptor such as @hourly or @every 30m), in local time.
func ParseSchedule(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("cron expression %q: %w", spec, err)
	}
	return s, nil
}

// Saver takes a snapshot into a file (etcd.Backend).
type Saver interface {
	SaveSnapshot(ctx context.Context, path string) (string, etcd.SnapshotStatus, error)
}

var _ Saver = (*etcd.Backend)(nil)

// Scheduled takes a snapshot into Dir at every time Schedule names and
// keeps the newest Retention of this node's.
type Scheduled struct {
	Schedule  cron.Schedule
	Retention int
	Dir       string
	// Node names the files (etcd-snapshot-NODE-UNIXTIME).
	Node  string
	Saver Saver
	Log   *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Run takes the snapshots until ctx ends. A failed snapshot is logged; the
// next one is still taken when its time comes.
func (s *Scheduled) Run(ctx context.Context) {
	now := s.now()
	for {
		next := s.Schedule.Next(now)
		t := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		path, st, err := s.SaveNow(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Error("scheduled etcd snapshot failed", "dir", s.Dir, "err", err)
			}
		} else {
			s.Log.Info("saved etcd snapshot", "path", path, "revision", st.Revision, "keys", st.TotalKeys, "size", st.TotalSize)
		}
		// A snapshot longer than the period skips the times it overran.
		now = s.now()
		if now.Before(next) {
			now = next
		}
	}
}

// SaveNow takes one snapshot into Dir, then removes this node's oldest
// beyond Retention.
func (s *Scheduled) SaveNow(ctx context.Context) (string, etcd.SnapshotStatus, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", etcd.SnapshotStatus{}, fmt.Errorf("snapshot dir: %w", err)
	}
	path := filepath.Join(s.Dir, fmt.Sprintf("%s%s-%d", Prefix, s.Node, s.now().Unix()))
	_, st, err := s.Saver.SaveSnapshot(ctx, path)
	if err != nil {
		return "", st, err
	}
	if err := s.prune(); err != nil {
		s.Log.Warn("remove old etcd snapshots", "dir", s.Dir, "err", err)
	}
	return path, st, nil
}

// prune removes this node's scheduled snapshots but the newest Retention,
// oldest first by the time in their names. Other files are left alone.
func (s *Scheduled) prune() error {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return err
	}
	type snap struct {
		name string
		unix int64
	}
	var snaps []snap
	prefix := Prefix + s.Node + "-"
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if unix, err := strconv.ParseInt(rest, 10, 64); err == nil {
			snaps = append(snaps, snap{e.Name(), unix})
		}
	}
	if len(snaps) <= s.Retention {
		return nil
	}
	slices.SortFunc(snaps, func(a, b snap) int { return cmp.Compare(a.unix, b.unix) })
	var errs []error
	for _, old := range snaps[:len(snaps)-s.Retention] {
		if err := os.Remove(filepath.Join(s.Dir, old.name)); err != nil {
			errs = append(errs, err)
		} else {
			s.Log.Info("removed old etcd snapshot", "path", filepath.Join(s.Dir, old.name))
		}
	}
	return errors.Join(errs...)
}

func (s *Scheduled) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
