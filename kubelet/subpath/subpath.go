package subpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DirName is the directory under a pod's directory holding the bind
// targets, named as kube names it.
const DirName = "volume-subpaths"

const (
	// nofollowFlags opens directories to walk without following a link.
	nofollowFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	// openFDFlags gets a handle on a component, a link included (then
	// fstat says so), without opening what it names: no hang on a fifo,
	// no device side effects.
	openFDFlags = unix.O_NOFOLLOW | unix.O_PATH | unix.O_CLOEXEC
)

// Subpath is one volume mount of a container that has a subPath.
type Subpath struct {
	// VolumeMountIndex is the mount's index in the container's
	// volumeMounts: one target per mount, as two mounts may name the
	// same volume.
	VolumeMountIndex int
	// Path is the subPath's host path, VolumePath joined with the subPath.
	Path string
	// VolumeName is the pod's name of the volume.
	VolumeName string
	// VolumePath is the volume's host directory.
	VolumePath string
	// PodDir is the kubelet's directory of the pod.
	PodDir string
	// ContainerName is the container's name (a DNS label: a safe path
	// element).
	ContainerName string
}

// Target is where sp is bind-mounted for the runtime.
func Target(sp Subpath) string {
	return filepath.Join(sp.PodDir, DirName, sp.VolumeName, sp.ContainerName, strconv.Itoa(sp.VolumeMountIndex))
}

// withinBase reports whether fullPath is base or below it (both clean).
func withinBase(fullPath, base string) bool {
	rel, err := filepath.Rel(base, fullPath)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// Prepare bind-mounts sp.Path onto its target and returns the target,
// the path to give the runtime. Links inside the volume are followed
// (a configMap's keys are links to its ..data directory) as long as the
// result stays inside; the open that follows allows no link at all, so
// a link swapped in between fails rather than escapes. A previous mount
// on the target (the container's earlier instance) is replaced.
func Prepare(sp Subpath) (string, error) {
	volumePath, err := filepath.EvalSymlinks(sp.VolumePath)
	if err != nil {
		return "", fmt.Errorf("error resolving symlinks in %q: %w", sp.VolumePath, err)
	}
	path, err := filepath.EvalSymlinks(sp.Path)
	if err != nil {
		return "", fmt.Errorf("error resolving symlinks in %q: %w", sp.Path, err)
	}
	if !withinBase(path, volumePath) {
		return "", fmt.Errorf("subpath %q not within volume path %q", path, volumePath)
	}
	fd, err := safeOpen(path, volumePath)
	if err != nil {
		return "", fmt.Errorf("error opening subpath %v: %w", path, err)
	}
	defer unix.Close(fd)
	target := Target(sp)
	if err := bind(fd, target); err != nil {
		return "", fmt.Errorf("error mounting %s: %w", sp.Path, err)
	}
	return target, nil
}

// bind mounts the file fd holds onto target, which it first clears of
// any earlier mount and creates as a directory or an empty file to match.
func bind(fd int, target string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	if err := cleanMountPoint(target); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := os.Mkdir(target, 0o750); err != nil {
			return err
		}
	} else {
		// A file is enough for any other type: the bind mount gives the
		// target the source's type.
		if err := os.WriteFile(target, nil, 0o640); err != nil {
			return err
		}
	}
	// The source is the magic link of the open file: it names the inode
	// the kubelet checked, not a path a container can redirect.
	if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), target, "", unix.MS_BIND, ""); err != nil {
		_ = os.Remove(target)
		return err
	}
	return nil
}

// unmountAll unmounts every layer mounted on path; a path that is not a
// mount point (EINVAL) or does not exist is done.
func unmountAll(path string) error {
	for range 100 {
		err := unix.Unmount(path, 0)
		if errors.Is(err, unix.EBUSY) {
			err = unix.Unmount(path, unix.MNT_DETACH)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
			return nil
		default:
			return fmt.Errorf("unmount %s: %w", path, err)
		}
	}
	return fmt.Errorf("unmount %s: still mounted", path)
}

// cleanMountPoint unmounts path and removes it. os.Remove never descends:
// a path still mounted fails instead of losing the volume's files.
func cleanMountPoint(path string) error {
	if err := unmountAll(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Clean unmounts and removes every subPath target of the pod whose
// directory is podDir, volume by volume; the pod directory can then be
// removed. An error leaves the rest in place.
func Clean(podDir string) error {
	root := filepath.Join(podDir, DirName)
	vols, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, v := range vols {
		if err := CleanVolume(podDir, v.Name()); err != nil {
			return err
		}
	}
	if err := os.Remove(root); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// CleanVolume unmounts and removes the subPath targets of one volume:
// VOLUME/CONTAINER/INDEX, only the first level under each container, never
// into a target.
func CleanVolume(podDir, volumeName string) error {
	dir := filepath.Join(podDir, DirName, volumeName)
	containers, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range containers {
		if !c.IsDir() {
			continue
		}
		cdir := filepath.Join(dir, c.Name())
		targets, err := os.ReadDir(cdir)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if err := cleanMountPoint(filepath.Join(cdir, t.Name())); err != nil {
				return fmt.Errorf("error cleaning subpath mount %s: %w", filepath.Join(cdir, t.Name()), err)
			}
		}
		if err := os.Remove(cdir); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}

// SafeMakeDir creates the directory subdir (relative) inside base with
// perm, each missing component with mkdirat from an fd of its parent
// opened without following links, so a link a container plants on the way
// cannot make the kubelet create directories outside base.
func SafeMakeDir(subdir, base string, perm os.FileMode) error {
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		return fmt.Errorf("error resolving symlinks in %s: %w", base, err)
	}
	return safeMakeDir(filepath.Join(realBase, subdir), realBase, perm)
}

func safeMakeDir(pathname, base string, perm os.FileMode) error {
	if !withinBase(pathname, base) {
		return fmt.Errorf("path %s is outside of allowed base %s", pathname, base)
	}
	if st, err := os.Stat(pathname); err == nil {
		if st.IsDir() {
			// It may be a link leading outside; Prepare's check decides.
			return nil
		}
		return &os.PathError{Op: "mkdir", Path: pathname, Err: unix.ENOTDIR}
	}
	existing, toCreate, err := findExistingPrefix(base, pathname)
	if err != nil {
		return fmt.Errorf("error opening directory %s: %w", pathname, err)
	}
	fullExisting, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("error opening directory %s: %w", existing, err)
	}
	if !withinBase(fullExisting, base) {
		return fmt.Errorf("path %s is outside of allowed base %s", fullExisting, base)
	}
	parent, err := safeOpen(fullExisting, base)
	if err != nil {
		return fmt.Errorf("cannot open directory %s: %w", existing, err)
	}
	defer func() { unix.Close(parent) }()
	current := fullExisting
	for _, dir := range toCreate {
		current = filepath.Join(current, dir)
		if err := unix.Mkdirat(parent, dir, uint32(perm.Perm())); err != nil {
			return &os.PathError{Op: "mkdir", Path: current, Err: err}
		}
		// The new directory may have been replaced since mkdirat; not by
		// a link (O_NOFOLLOW), and any other file ends the walk with
		// an error or is the container's own file.
		child, err := unix.Openat(parent, dir, nofollowFlags|unix.O_DIRECTORY, 0)
		if err != nil {
			return fmt.Errorf("cannot open %s: %w", current, err)
		}
		unix.Close(parent)
		parent = child
		// mkdirat obeyed the umask; the container must get perm.
		if err := unix.Fchmod(parent, uint32(perm.Perm())); err != nil {
			return fmt.Errorf("chmod %q failed: %w", current, err)
		}
	}
	return nil
}

// findExistingPrefix walks pathname from base and returns its longest
// existing prefix and the components after it.
func findExistingPrefix(base, pathname string) (string, []string, error) {
	rel, err := filepath.Rel(base, pathname)
	if err != nil {
		return base, nil, err
	}
	dirs := strings.Split(rel, string(filepath.Separator))
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathname, nil, fmt.Errorf("error opening %s: %w", base, err)
	}
	defer func() { unix.Close(fd) }()
	current := base
	for i, dir := range dirs {
		// O_PATH: a directory replaced by a fifo does not hang the open.
		child, err := unix.Openat(fd, dir, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return current, dirs[i:], nil
			}
			return base, nil, err
		}
		unix.Close(fd)
		fd = child
		current = filepath.Join(current, dir)
	}
	return pathname, nil, nil
}

// safeOpen opens pathname, which must be inside base and contain no link
// below base, component by component from base with openat(O_NOFOLLOW):
// a link anywhere fails, whenever it was put there. It returns an O_PATH
// fd the caller closes.
func safeOpen(pathname, base string) (int, error) {
	pathname = filepath.Clean(pathname)
	base = filepath.Clean(base)
	rel, err := filepath.Rel(base, pathname)
	if err != nil {
		return -1, err
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, fmt.Errorf("path %s is outside of allowed base %s", pathname, base)
	}
	parent, err := unix.Open(base, nofollowFlags, 0)
	if err != nil {
		return -1, fmt.Errorf("cannot open directory %s: %w", base, err)
	}
	if rel == "." {
		return parent, nil
	}
	current := base
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		current = filepath.Join(current, seg)
		// Trigger an automount, as kube does; an error means nothing
		// here (the trailing slash makes it fail on non-directories).
		var st unix.Stat_t
		_ = unix.Fstatat(parent, seg+"/", &st, unix.AT_SYMLINK_NOFOLLOW)
		child, err := unix.Openat(parent, seg, openFDFlags, 0)
		unix.Close(parent)
		if err != nil {
			return -1, fmt.Errorf("cannot open %s: %w", current, err)
		}
		if err := unix.Fstat(child, &st); err != nil {
			unix.Close(child)
			return -1, fmt.Errorf("error running fstat on %s with %w", current, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(child)
			return -1, fmt.Errorf("unexpected symlink found %s", current)
		}
		parent = child
	}
	return parent, nil
}
