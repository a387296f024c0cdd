package snapshot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/etcd"
)

// fakeSaver writes a small file where a snapshot would go.
type fakeSaver struct{ n atomic.Int32 }

func (f *fakeSaver) SaveSnapshot(_ context.Context, path string) (string, etcd.SnapshotStatus, error) {
	f.n.Add(1)
	return "3.6.0", etcd.SnapshotStatus{Revision: 7}, os.WriteFile(path, []byte("snap"), 0o600)
}

// everyTick is a schedule firing every d.
type everyTick struct{ d time.Duration }

func (e everyTick) Next(t time.Time) time.Time { return t.Add(e.d) }

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range entries {
		n = append(n, e.Name())
	}
	slices.Sort(n)
	return n
}

// TestRetention keeps the newest Retention of this node's snapshots and
// leaves other files (another node's, a manual one) alone.
func TestRetention(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"etcd-snapshot-other-100", "manual.db", "etcd-snapshot-n1-notatime"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clock := time.Unix(1000, 0)
	s := &Scheduled{Retention: 2, Dir: dir, Node: "n1", Saver: &fakeSaver{}, Log: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return clock }}
	// 999 < 1000 < 1001: the order of the times, not of the names' bytes
	// (a name sort would put 1000 and 1001 before 999).
	for _, unix := range []int64{999, 1000, 1001} {
		clock = time.Unix(unix, 0)
		path, st, err := s.SaveNow(context.Background())
		if err != nil || st.Revision != 7 || filepath.Base(path) != fmt.Sprintf("etcd-snapshot-n1-%d", unix) {
			t.Fatalf("SaveNow: %v %v", path, err)
		}
	}
	want := []string{"etcd-snapshot-n1-1000", "etcd-snapshot-n1-1001", "etcd-snapshot-n1-notatime", "etcd-snapshot-other-100", "manual.db"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}

// TestRunOnSchedule takes snapshots as the schedule says until the context
// ends.
func TestRunOnSchedule(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "snapshots") // made on the first snapshot
	saver := &fakeSaver{}
	var unix atomic.Int64
	unix.Store(5000)
	s := &Scheduled{Schedule: everyTick{20 * time.Millisecond}, Retention: 3, Dir: dir, Node: "n", Saver: saver,
		Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return time.Unix(unix.Add(1), 0) }}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	for saver.n.Load() < 5 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if saver.n.Load() < 5 {
		t.Fatalf("%d snapshots taken, want 5 before the deadline", saver.n.Load())
	}
	if got := len(names(t, dir)); got != 3 {
		t.Errorf("%d snapshots kept, want the retention, 3", got)
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	for spec, ok := range map[string]bool{DefaultSchedule: true, "*/5 * * * *": true, "@every 1h": true, "@hourly": true, "0 */12 * *": false, "bad": false} {
		if _, err := ParseSchedule(spec); (err == nil) != ok {
			t.Errorf("ParseSchedule(%q) = %v, want ok %v", spec, err, ok)
		}
	}
}
