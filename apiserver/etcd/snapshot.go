package etcd

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// DefaultRevisionBump is how far a restore moves the store's revision past
// the snapshot's (etcdutl snapshot restore --bump-revision, the value etcd's
// recovery guide gives for Kubernetes): far beyond any revision the lost
// cluster can have reached after the snapshot, so no resourceVersion a
// client still holds is ever reused for different data.
const DefaultRevisionBump = 1_000_000_000

// SnapshotStatus describes a snapshot file, as `etcdutl snapshot status`
// does.
type SnapshotStatus struct {
	// Hash is etcd's CRC-32C over the buckets' keys and values.
	Hash uint32
	// Revision is the store revision the snapshot was taken at.
	Revision int64
	// TotalKeys counts the live keys.
	TotalKeys int
	// TotalSize is the bbolt database size in bytes.
	TotalSize int64
	// Version is the storage version ("" before etcd 3.6).
	Version string
}

// SaveSnapshot streams a snapshot of the member the client is connected to
// (etcd's maintenance Snapshot API, what `etcdctl snapshot save` calls)
// into path. It writes a temporary file in path's directory, checks the
// sha256 etcd appends, syncs it and renames it over path, so path is either
// the complete snapshot or untouched. It returns the etcd server's version
// and the file's status.
func (b *Backend) SaveSnapshot(ctx context.Context, path string) (version string, st SnapshotStatus, err error) {
	resp, err := b.client.SnapshotWithVersion(ctx)
	if err != nil {
		return "", st, fmt.Errorf("etcd snapshot: %w", err)
	}
	defer resp.Snapshot.Close()
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.part")
	if err != nil {
		return "", st, fmt.Errorf("create snapshot file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	size, err := io.Copy(f, resp.Snapshot)
	if err != nil {
		return "", st, fmt.Errorf("receive snapshot: %w", err)
	}
	if !hasChecksum(size) {
		return "", st, fmt.Errorf("receive snapshot: %d bytes without etcd's sha256 checksum (stream cut short?)", size)
	}
	if err = f.Sync(); err != nil {
		return "", st, fmt.Errorf("sync snapshot file: %w", err)
	}
	if err = f.Close(); err != nil {
		return "", st, fmt.Errorf("close snapshot file: %w", err)
	}
	if err = os.Chmod(tmp, 0o600); err != nil {
		return "", st, fmt.Errorf("snapshot file mode: %w", err)
	}
	if st, err = snapshotStatus(tmp); err != nil {
		return "", st, fmt.Errorf("check snapshot: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return "", st, fmt.Errorf("save snapshot: %w", err)
	}
	if err = syncDir(dir); err != nil {
		return "", st, fmt.Errorf("save snapshot: %w", err)
	}
	return resp.Version, st, nil
}

// hasChecksum reports whether a snapshot of n bytes ends in etcd's sha256:
// the database is a whole number of 512-byte sectors, the digest follows.
func hasChecksum(n int64) bool { return n%512 == sha256.Size }

// ErrCorruptSnapshot is returned (wrapped) for a snapshot file that is
// truncated, altered or not an etcd snapshot.
var ErrCorruptSnapshot = errors.New("corrupt snapshot")

// VerifySnapshot checks the sha256 etcd appends to a snapshot (unless
// skipHash: a database copied from member/snap/db has none) and the bbolt
// database's integrity, and returns its status.
func VerifySnapshot(path string, skipHash bool) (SnapshotStatus, error) {
	if !skipHash {
		if err := checkSHA256(path); err != nil {
			return SnapshotStatus{}, err
		}
	}
	st, err := snapshotStatus(path)
	if err != nil {
		return st, fmt.Errorf("%w %s: %w", ErrCorruptSnapshot, path, err)
	}
	return st, nil
}

// checkSHA256 compares the digest at the end of the file with the one of
// the rest.
func checkSHA256(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	size := fi.Size()
	if !hasChecksum(size) {
		return fmt.Errorf("%w %s: truncated or not an etcd snapshot (%d bytes: no sha256 checksum at the end)", ErrCorruptSnapshot, path, size)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-sha256.Size); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if got := h.Sum(nil); string(got) != string(want) {
		return fmt.Errorf("%w %s: sha256 checksum mismatch (file altered or damaged)", ErrCorruptSnapshot, path)
	}
	return nil
}

// snapshotStatus reads a snapshot with etcdutl, which also runs bbolt's
// consistency check. bbolt may panic on a page it cannot make sense of.
func snapshotStatus(path string) (st SnapshotStatus, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable database: %v", r)
		}
	}()
	s, err := etcdutl.NewV3(zap.NewNop()).Status(path)
	if err != nil {
		return st, err
	}
	return SnapshotStatus{Hash: s.Hash, Revision: s.Revision, TotalKeys: s.TotalKey, TotalSize: s.TotalSize, Version: s.Version}, nil
}

// RestoreOptions say how a snapshot becomes an embedded server's data.
type RestoreOptions struct {
	// DataDir is the embedded server's data directory (the apiserver's
	// --data-dir). It must be missing or empty.
	DataDir string
	// PeerURL is the member's peer URL, as the apiserver's
	// --embedded-etcd-peer-url ("": https://127.0.0.1:2380). A single
	// member never dials it; the membership records it.
	PeerURL string
	// RevisionBump moves the store revision this far past the snapshot's
	// and marks the new revision compacted (etcdutl's --bump-revision with
	// --mark-compacted): objects keep their resourceVersions, but a watch
	// or list from any older resourceVersion gets 410 Gone and its
	// informer relists. 0 leaves the revision as the snapshot has it.
	RevisionBump uint64
	// SkipHashCheck accepts a file without etcd's sha256 (a member/snap/db
	// copied out of a data directory).
	SkipHashCheck bool
	// Logger receives etcdutl's warnings and errors.
	Logger *slog.Logger
}

// RestoreResult is what a restore made.
type RestoreResult struct {
	Snapshot SnapshotStatus
	// Revision is the restored store's revision: the snapshot's plus the
	// bump. With a bump, every revision up to it is compacted.
	Revision int64
}

// RestoreSnapshot makes opts.DataDir an embedded server's data directory
// holding the snapshot at path, with the member name and cluster token the
// apiserver's embedded server uses (etcdutl's restore). The snapshot is
// verified first; the restore is written in a temporary directory inside
// DataDir and moved into place at the end, so a refused or failed restore
// leaves DataDir as it was.
func RestoreSnapshot(path string, opts RestoreOptions) (res RestoreResult, err error) {
	if opts.DataDir == "" {
		return res, errors.New("restore needs a data directory")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	peerURL := opts.PeerURL
	if peerURL == "" {
		peerURL = "https://127.0.0.1:2380"
	}
	if res.Snapshot, err = VerifySnapshot(path, opts.SkipHashCheck); err != nil {
		return res, err
	}
	created, err := prepareEmptyDir(opts.DataDir)
	if err != nil {
		return res, err
	}
	tmp, err := os.MkdirTemp(opts.DataDir, ".restore-")
	if err != nil {
		if created {
			os.Remove(opts.DataDir)
		}
		return res, fmt.Errorf("restore: %w", err)
	}
	defer func() {
		os.RemoveAll(tmp)
		if err != nil && created {
			os.RemoveAll(opts.DataDir)
		}
	}()
	mgr := etcdutl.NewV3(zapLogger(opts.Logger, zap.ErrorLevel, new(atomic.Bool)))
	if err = mgr.Restore(etcdutl.RestoreConfig{
		SnapshotPath:        path,
		Name:                memberName,
		OutputDataDir:       tmp,
		PeerURLs:            []string{peerURL},
		InitialCluster:      memberName + "=" + peerURL,
		InitialClusterToken: memberName,
		SkipHashCheck:       opts.SkipHashCheck,
		RevisionBump:        opts.RevisionBump,
		MarkCompacted:       opts.RevisionBump > 0,
	}); err != nil {
		return res, fmt.Errorf("restore %s: %w", path, err)
	}
	// member/ is the whole data directory etcd reads; one rename puts it
	// in place.
	if err = os.Rename(filepath.Join(tmp, "member"), filepath.Join(opts.DataDir, "member")); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	if err = syncDir(opts.DataDir); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	res.Revision = res.Snapshot.Revision + int64(opts.RevisionBump)
	return res, nil
}

// prepareEmptyDir makes dir if it is missing (created reports it) and
// refuses a non-empty one.
func prepareEmptyDir(dir string) (created bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("create data dir: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("data dir: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("data dir %s is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("data dir: %w", err)
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("data dir %s is not empty (%d entries, e.g. %s): restore only into a missing or empty directory; stop the apiserver and move the old data away first", dir, len(entries), entries[0].Name())
	}
	return false, nil
}

// syncDir makes a rename in dir survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return fileutil.Fsync(d)
}
