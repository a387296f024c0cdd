package volume

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FileProjection is one file of a payload. FsUser, when set, owns the
// file (kube gives a service account token to the pod's common user).
type FileProjection struct {
	Data   []byte
	Mode   int32
	FsUser *int64
}

// The names kube's AtomicWriter uses inside a volume's directory.
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
)

// AtomicWriter publishes payloads into one volume directory as kube's
// does: the files live in a hidden timestamped directory ("..2026_12_03_13_
// 20_01.123456789"), "..data" is a symlink to it, and each top-level entry
// of the payload is a symlink through "..data". A new payload goes into a
// new timestamped directory and "..data" is renamed over in one step, so
// readers see the old payload or the new one, never a mix.
type AtomicWriter struct {
	dir string
	// FSGroup, when set, is the pod's fsGroup: each new payload is given
	// to it read-only (SetVolumeOwnership) before it is published.
	FSGroup *int64
}

// NewAtomicWriter writes into dir (created on first Write).
func NewAtomicWriter(dir string) *AtomicWriter { return &AtomicWriter{dir: dir} }

// Write publishes payload, keyed by relative path. It returns whether the
// content changed; an unchanged payload leaves the directory as it is.
func (w *AtomicWriter) Write(payload map[string]FileProjection) (bool, error) {
	for p := range payload {
		if err := validatePath(p); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return false, err
	}
	oldTS, err := os.Readlink(filepath.Join(w.dir, dataDirName))
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	if oldTS != "" && !isTimestampDir(oldTS) {
		// Not a link this writer made: never follow it (it is replaced
		// below, and what it points at is neither read nor removed).
		oldTS = ""
	}
	oldPaths := map[string]bool{}
	if oldTS != "" {
		if same, paths, err := w.compare(filepath.Join(w.dir, oldTS), payload); err != nil {
			return false, err
		} else if same {
			return false, nil
		} else {
			oldPaths = paths
		}
	}
	tsDir, err := os.MkdirTemp(w.dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, err
	}
	tsName := filepath.Base(tsDir)
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return false, err
	}
	if err := writePayload(tsDir, payload); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, err
	}

	// The user-visible entries point through ..data, so they follow the
	// swap below; new ones are created first (they dangle until it).
	top := map[string]bool{}
	for p := range payload {
		top[strings.SplitN(p, "/", 2)[0]] = true
	}
	for name := range top {
		link := filepath.Join(w.dir, name)
		target := filepath.Join(dataDirName, name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		if err := replaceWithSymlink(target, link); err != nil {
			_ = os.RemoveAll(tsDir)
			return false, err
		}
	}
	// The whole volume goes to the fsGroup (the new files before they are
	// published), as kube's setPerms step does.
	if err := SetVolumeOwnership(w.dir, w.FSGroup, nil, true); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	tmpLink := filepath.Join(w.dir, newDataDirName)
	_ = os.Remove(tmpLink)
	if err := os.Symlink(tsName, tmpLink); err != nil {
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	if err := os.Rename(tmpLink, filepath.Join(w.dir, dataDirName)); err != nil {
		_ = os.Remove(tmpLink)
		_ = os.RemoveAll(tsDir)
		return false, err
	}
	// What the old payload had at the top level and the new one lacks goes.
	for p := range oldPaths {
		name := strings.SplitN(p, "/", 2)[0]
		if !top[name] {
			_ = os.Remove(filepath.Join(w.dir, name))
		}
	}
	if oldTS != "" {
		_ = os.RemoveAll(filepath.Join(w.dir, oldTS))
	}
	return true, nil
}

// replaceWithSymlink makes link a symlink to target. Whatever else is at
// link (a plain file, or a link pointing elsewhere, left by an earlier
// writer or a container writing into its volume) is replaced in one
// rename; a directory there is an error, since its contents would be lost.
func replaceWithSymlink(target, link string) error {
	fi, err := os.Lstat(link)
	if os.IsNotExist(err) {
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("create symlink %s: %w", link, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("create symlink %s: a directory is in the way", link)
	}
	tmp := link + ".tmp-link"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("create symlink %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("replace %s with a symlink: %w", link, err)
	}
	return nil
}

// compare reports whether the published directory holds exactly payload
// (contents and modes), and the paths it holds.
func (w *AtomicWriter) compare(tsDir string, payload map[string]FileProjection) (bool, map[string]bool, error) {
	paths := map[string]bool{}
	same := true
	err := filepath.Walk(tsDir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(tsDir, p)
		if err != nil {
			return err
		}
		paths[rel] = true
		f, ok := payload[rel]
		if !ok || fi.Mode().Perm() != w.fileMode(f.Mode) {
			same = false
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, f.Data) {
			same = false
		}
		return nil
	})
	if os.IsNotExist(err) {
		return false, paths, nil
	}
	if err != nil {
		return false, nil, err
	}
	return same && len(paths) == len(payload), paths, nil
}

// fileMode is the permission a payload file of mode ends with: with an
// fsGroup, the group may read it.
func (w *AtomicWriter) fileMode(mode int32) os.FileMode {
	m := os.FileMode(mode).Perm()
	if w.FSGroup != nil {
		m |= roMask
	}
	return m
}

func writePayload(dir string, payload map[string]FileProjection) error {
	for _, p := range slices.Sorted(maps.Keys(payload)) {
		f := payload[p]
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.Data, os.FileMode(f.Mode)); err != nil {
			return err
		}
		// WriteFile's mode is subject to the umask.
		if err := os.Chmod(full, os.FileMode(f.Mode)); err != nil {
			return err
		}
		if f.FsUser != nil {
			if err := os.Chown(full, int(*f.FsUser), -1); err != nil {
				return err
			}
		}
	}
	return nil
}

// validatePath refuses what kube's AtomicWriter refuses: empty, absolute,
// ".."-containing or "..": prefixed paths, and over-long ones.
func validatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("invalid path: must not be empty")
	case len(p) > 4096:
		return fmt.Errorf("invalid path: must be less than or equal to 4096 characters")
	case filepath.IsAbs(p):
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(el) > 255 {
			return fmt.Errorf("invalid path: path elements must be less than or equal to 255 characters: %s", p)
		}
	}
	return nil
}

// isTimestampDir reports whether name is one of this writer's timestamped
// directories: a single entry of the volume directory whose name starts
// with "..".
func isTimestampDir(name string) bool {
	return strings.HasPrefix(name, "..") && len(name) > 2 && !strings.ContainsRune(name, '/') &&
		name != dataDirName && name != newDataDirName
}
