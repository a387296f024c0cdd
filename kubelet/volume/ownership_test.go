package volume

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's group to any gid needs root")
	}
}

// owner is the gid and mode (with setgid) of path, not following links.
func owner(t *testing.T, path string) (uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Gid, fi.Mode() & (os.ModePerm | os.ModeSetgid)
}

func tree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vol")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, m := range map[string]os.FileMode{"a": 0o644, "sub/b": 0o600} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), m); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, p), m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSetVolumeOwnership(t *testing.T) {
	needRoot(t)
	g := int64(4321)
	tests := []struct {
		name     string
		readOnly bool
		want     map[string]os.FileMode
	}{
		{name: "writable", want: map[string]os.FileMode{".": 0o775 | os.ModeSetgid, "sub": 0o775 | os.ModeSetgid, "a": 0o664, "sub/b": 0o660}},
		{name: "read-only", readOnly: true, want: map[string]os.FileMode{".": 0o755 | os.ModeSetgid, "sub": 0o755 | os.ModeSetgid, "a": 0o644, "sub/b": 0o640}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t)
			if err := SetVolumeOwnership(dir, &g, nil, tc.readOnly); err != nil {
				t.Fatal(err)
			}
			for p, want := range tc.want {
				gid, mode := owner(t, filepath.Join(dir, p))
				if gid != uint32(g) || mode != want {
					t.Errorf("%s: gid %d mode %v, want %d %v", p, gid, mode, g, want)
				}
			}
			if gid, _ := owner(t, filepath.Join(dir, "link")); gid != uint32(g) {
				t.Errorf("link: gid %d", gid)
			}
		})
	}
	t.Run("no fsGroup", func(t *testing.T) {
		dir := tree(t)
		if err := SetVolumeOwnership(dir, nil, nil, false); err != nil {
			t.Fatal(err)
		}
		if gid, mode := owner(t, filepath.Join(dir, "a")); gid != 0 || mode != 0o644 {
			t.Errorf("a: gid %d mode %v", gid, mode)
		}
	})
}

func TestSetVolumeOwnershipOnRootMismatch(t *testing.T) {
	needRoot(t)
	g := int64(4321)
	policy := FSGroupChangeOnRootMismatch
	dir := tree(t)
	// A root already right: the walk is skipped, the files keep group 0.
	if err := os.Chown(dir, -1, int(g)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o775|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if err := SetVolumeOwnership(dir, &g, &policy, false); err != nil {
		t.Fatal(err)
	}
	if gid, _ := owner(t, filepath.Join(dir, "a")); gid != 0 {
		t.Errorf("OnRootMismatch with a matching root changed a file's group to %d", gid)
	}
	// Always (no policy) walks.
	if err := SetVolumeOwnership(dir, &g, nil, false); err != nil {
		t.Fatal(err)
	}
	if gid, _ := owner(t, filepath.Join(dir, "a")); gid != uint32(g) {
		t.Errorf("Always: a has group %d", gid)
	}
	// A root without the setgid bit is a mismatch.
	dir = tree(t)
	if err := os.Chown(dir, -1, int(g)); err != nil {
		t.Fatal(err)
	}
	if err := SetVolumeOwnership(dir, &g, &policy, false); err != nil {
		t.Fatal(err)
	}
	if gid, mode := owner(t, filepath.Join(dir, "sub/b")); gid != uint32(g) || mode != 0o660 {
		t.Errorf("OnRootMismatch with a mismatched root: sub/b gid %d mode %v", gid, mode)
	}
}

// TestAtomicWriterFSGroup: a payload written for a pod with an fsGroup is
// the group's to read with the modes asked for otherwise unchanged, a
// file with FsUser is that user's, and writing the same payload again is
// no change.
func TestAtomicWriterFSGroup(t *testing.T) {
	needRoot(t)
	g, u := int64(2000), int64(1000)
	dir := filepath.Join(t.TempDir(), "secret")
	w := NewAtomicWriter(dir)
	w.FSGroup = &g
	payload := map[string]FileProjection{
		"key":   {Data: []byte("v"), Mode: 0o400},
		"conf":  {Data: []byte("c"), Mode: 0o644},
		"token": {Data: []byte("t"), Mode: 0o600, FsUser: &u},
	}
	if changed, err := w.Write(payload); err != nil || !changed {
		t.Fatalf("write: changed %v err %v", changed, err)
	}
	for p, want := range map[string]os.FileMode{"key": 0o440, "conf": 0o644, "token": 0o640} {
		gid, mode := owner(t, filepath.Join(dir, dataDirName, p))
		if gid != uint32(g) || mode != want {
			t.Errorf("%s: gid %d mode %v, want %d %v", p, gid, mode, g, want)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "token"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != uint32(u) {
		t.Errorf("token owned by %d, want %d", uid, u)
	}
	if gid, mode := owner(t, dir); gid != uint32(g) || mode&os.ModeSetgid == 0 {
		t.Errorf("volume directory gid %d mode %v", gid, mode)
	}
	if changed, err := w.Write(payload); err != nil || changed {
		t.Errorf("same payload again: changed %v err %v", changed, err)
	}
}

func TestProjectedTokenOwnership(t *testing.T) {
	one, two := int64(1000), int64(2000)
	c := func(u *int64) api.Container {
		if u == nil {
			return api.Container{Name: "c"}
		}
		return api.Container{Name: "c", SecurityContext: &api.SecurityContext{RunAsUser: u}}
	}
	tests := []struct {
		name string
		pod  api.PodSpec
		want *int64
	}{
		{name: "no users", pod: api.PodSpec{Containers: []api.Container{c(nil)}}},
		{name: "pod user", pod: api.PodSpec{SecurityContext: &api.PodSecurityContext{RunAsUser: &one}, Containers: []api.Container{c(nil), c(&one)}}, want: &one},
		{name: "one container differs", pod: api.PodSpec{SecurityContext: &api.PodSecurityContext{RunAsUser: &one}, Containers: []api.Container{c(nil), c(&two)}}},
		{name: "an init container without a user", pod: api.PodSpec{InitContainers: []api.Container{c(nil)}, Containers: []api.Container{c(&one)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fsUser(&api.Pod{Spec: tc.pod})
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("fsUser %v, want %v", got, tc.want)
			}
		})
	}
}
