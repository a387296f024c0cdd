package pods

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// TestEmptyDirMemorySize: kube's sizing of a Memory emptyDir.
func TestEmptyDirMemorySize(t *testing.T) {
	gi := func(s string) api.ResourceList { return api.ResourceList{api.ResourceMemory: resource.MustParse(s)} }
	limited := func(limits ...string) *api.Pod {
		p := &api.Pod{}
		for _, l := range limits {
			c := api.Container{}
			if l != "" {
				c.Resources.Limits = gi(l)
			}
			p.Spec.Containers = append(p.Spec.Containers, c)
		}
		return p
	}
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	for _, c := range []struct {
		name        string
		pod         *api.Pod
		sizeLimit   *resource.Quantity
		allocatable api.ResourceList
		want        int64
	}{
		{"node allocatable", limited(""), nil, gi("4Gi"), 4 << 30},
		{"pod limit below allocatable", limited("1Gi", "1Gi"), nil, gi("4Gi"), 2 << 30},
		{"a container without a limit: no pod limit", limited("1Gi", ""), nil, gi("4Gi"), 4 << 30},
		{"sizeLimit below the pod limit", limited("1Gi"), q("64Mi"), gi("4Gi"), 64 << 20},
		{"sizeLimit above the pod limit", limited("1Gi"), q("2Gi"), gi("4Gi"), 1 << 30},
		{"nothing known: the kernel's default", limited(""), nil, nil, 0},
		{"only a sizeLimit", limited(""), q("10Mi"), nil, 10 << 20},
	} {
		if got := emptyDirMemorySize(c.pod, &api.EmptyDirVolumeSource{Medium: api.StorageMediumMemory, SizeLimit: c.sizeLimit}, c.allocatable); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestEmptyDirMemoryIsTmpfs: a Memory emptyDir is a tmpfs of the computed
// size, writable by all, and unmountEmptyDirs takes it away (the
// conformance specs "EmptyDir volumes should support (root,0644,tmpfs)"
// and the like read the mount type). Needs root to mount.
func TestEmptyDirMemoryIsTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	m := &Manager{opts: Options{RootDir: t.TempDir()}}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{UID: "u1"}}
	size := resource.MustParse("8Mi")
	p := filepath.Join(m.podDir("u1"), "volumes", emptyDirPlugin, "cache")
	got, err := m.setUpEmptyDir(pod, &api.EmptyDirVolumeSource{Medium: api.StorageMediumMemory, SizeLimit: &size}, p, "cache")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(p, unix.MNT_DETACH) })
	var st unix.Statfs_t
	if err := unix.Statfs(got, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		t.Fatalf("filesystem type %#x, want tmpfs", st.Type)
	}
	if total := int64(st.Blocks) * st.Bsize; total != 8<<20 {
		t.Errorf("tmpfs size %d, want %d", total, 8<<20)
	}
	if fi, err := os.Stat(got); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("mode %v %v, want 0777", fi.Mode(), err)
	}
	// Set up again (the pod's next sync): the same mount, not a second.
	if _, err := m.setUpEmptyDir(pod, &api.EmptyDirVolumeSource{Medium: api.StorageMediumMemory}, p, "cache"); err != nil {
		t.Fatal(err)
	}
	if err := unmountEmptyDirs(m.podDir("u1")); err != nil {
		t.Fatal(err)
	}
	if isMountPoint(p) {
		t.Fatalf("%s is still a mount point after unmountEmptyDirs", p)
	}
	// A medium the node does not offer is a clear error.
	if _, err := m.setUpEmptyDir(pod, &api.EmptyDirVolumeSource{Medium: api.StorageMediumHugePages}, filepath.Join(m.podDir("u1"), "volumes", emptyDirPlugin, "huge"), "huge"); err == nil {
		t.Error("a HugePages emptyDir was set up")
	}
}
