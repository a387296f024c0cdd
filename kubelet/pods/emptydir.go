package pods

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/quota"
	"github.com/minik8s/minik8s/kubelet/volume"
)

// emptyDirPlugin is the directory of emptyDir volumes under a pod's
// volumes directory, as kube's kubelet names it.
const emptyDirPlugin = "kubernetes.io~empty-dir"

// setUpEmptyDir makes an emptyDir volume as kube's plugin does: a
// directory everyone may write — for medium Memory a tmpfs mounted on it,
// sized as kube sizes it (emptyDirMemorySize) — given once (a ready marker
// under the pod's plugins directory records it) to the pod's fsGroup, so
// later files of the containers keep their own owners.
func (m *Manager) setUpEmptyDir(pod *api.Pod, src *api.EmptyDirVolumeSource, p, name string) (string, error) {
	ready := filepath.Join(m.podDir(string(pod.UID)), "plugins", emptyDirPlugin, name, "ready")
	if _, err := os.Stat(ready); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(p, 0o777); err != nil {
		return "", err
	}
	switch src.Medium {
	case api.StorageMediumDefault:
	case api.StorageMediumMemory:
		if err := mountTmpfs(p, emptyDirMemorySize(pod, src, m.nodeAllocatable())); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("emptyDir medium %q is not supported on this node (only the default and Memory)", src.Medium)
	}
	if err := os.Chmod(p, 0o777); err != nil {
		return "", err
	}
	if err := volume.SetVolumeOwnership(p, fsGroup(pod), nil, false); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(ready), 0o750); err != nil {
		return "", err
	}
	return p, os.WriteFile(ready, nil, 0o600)
}

// mountTmpfs mounts a tmpfs of size bytes (0: the kernel's default) on p,
// unless one is mounted there already (a kubelet restarted between the
// mount and the ready marker).
func mountTmpfs(p string, size int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err == nil && st.Type == unix.TMPFS_MAGIC && isMountPoint(p) {
		return nil
	}
	opts := ""
	if size > 0 {
		opts = fmt.Sprintf("size=%d", size)
	}
	if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", p, err)
	}
	return nil
}

// isMountPoint: p is on another device than its parent.
func isMountPoint(p string) bool {
	var a, b unix.Stat_t
	if unix.Lstat(p, &a) != nil || unix.Lstat(filepath.Dir(p), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}

// emptyDirMemorySize is the size of a Memory emptyDir as kube's kubelet
// computes it (SizeMemoryBackedVolumes): the node's allocatable memory,
// lowered to the pod's memory limit when every container has one, lowered
// again to the volume's sizeLimit; each only when above zero.
func emptyDirMemorySize(pod *api.Pod, src *api.EmptyDirVolumeSource, allocatable api.ResourceList) int64 {
	var size int64
	if q, ok := allocatable[api.ResourceMemory]; ok {
		size = q.Value()
	}
	lower := func(v int64) {
		if v > 0 && (size <= 0 || v <= size) {
			size = v
		}
	}
	if allLimitMemory(pod) {
		if q, ok := quota.PodLimits(pod)[api.ResourceMemory]; ok {
			lower(q.Value())
		}
	}
	if src.SizeLimit != nil {
		lower(src.SizeLimit.Value())
	}
	return size
}

// allLimitMemory: every container (init ones included) has a memory
// limit, so the pod's cgroup has one.
func allLimitMemory(pod *api.Pod) bool {
	for _, cs := range [][]api.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if _, ok := c.Resources.Limits[api.ResourceMemory]; !ok {
				return false
			}
		}
	}
	return true
}

// unmountEmptyDirs unmounts the tmpfs of a pod's Memory emptyDirs, so
// that removing the pod's directory removes nothing through them and
// frees their memory.
func unmountEmptyDirs(podDir string) error {
	dir := filepath.Join(podDir, "volumes", emptyDirPlugin)
	vols, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, v := range vols {
		p := filepath.Join(dir, v.Name())
		if !isMountPoint(p) {
			continue
		}
		if err := unix.Unmount(p, 0); err != nil {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount emptyDir %s: %w", p, err)
			}
		}
	}
	return nil
}
