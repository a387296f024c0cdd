package volume

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The permission bits kube's SetVolumeOwnership adds for the fsGroup: the
// group may read (and, on a writable volume, write) every file and enter
// every directory, whose setgid bit gives new files the group too.
const (
	rwMask      = os.FileMode(0o660)
	roMask      = os.FileMode(0o440)
	executeMask = os.FileMode(0o110)
)

// FSGroupChangeOnRootMismatch is the fsGroupChangePolicy that skips the
// walk when the volume's root already has the group and permissions.
const FSGroupChangeOnRootMismatch = "OnRootMismatch"

// SetVolumeOwnership gives the volume at dir to the pod's fsGroup as
// kube's does: every file and directory under it (dir included) is
// group-owned by fsGroup, gets group read (and write unless readOnly)
// permission, and directories get group execute and setgid; symbolic
// links are re-owned but not followed. A nil fsGroup changes nothing.
// With changePolicy OnRootMismatch the walk is skipped when dir already
// has the group and the permissions.
func SetVolumeOwnership(dir string, fsGroup *int64, changePolicy *string, readOnly bool) error {
	if fsGroup == nil {
		return nil
	}
	if changePolicy != nil && *changePolicy == FSGroupChangeOnRootMismatch && !requiresPermissionChange(dir, *fsGroup, readOnly) {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return changeFilePermission(path, *fsGroup, readOnly, info)
	})
}

func changeFilePermission(path string, fsGroup int64, readOnly bool, info fs.FileInfo) error {
	if err := os.Lchown(path, -1, int(fsGroup)); err != nil {
		return err
	}
	// A link's own mode means nothing, and chmod would change its target.
	if info.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	mask := rwMask
	if readOnly {
		mask = roMask
	}
	if info.IsDir() {
		mask |= os.ModeSetgid | executeMask
	}
	return os.Chmod(path, info.Mode()|mask)
}

// requiresPermissionChange is kube's check of a volume's root for
// OnRootMismatch: another group, a non-directory, or missing bits.
func requiresPermissionChange(dir string, fsGroup int64, readOnly bool) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int64(st.Gid) != fsGroup || !fi.IsDir() {
		return true
	}
	want := rwMask
	if readOnly {
		want = roMask
	}
	want |= os.ModeSetgid | executeMask
	have := fi.Mode().Perm() | (fi.Mode() & os.ModeSetgid)
	return have&want != want
}
