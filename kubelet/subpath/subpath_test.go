package subpath

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// volumeFixture is a volume directory a container has been writing to,
// next to an "outside" directory standing for the rest of the node.
//
//	vol/a/b/marker    "inside"
//	vol/root   -> /
//	vol/out    -> ../outside     (relative, leaves the volume)
//	vol/abs    -> /etc           (absolute)
//	vol/m      -> /              (a middle component: m/etc)
//	vol/rel    -> a/b            (relative, stays inside)
//	vol/file   a regular file
//	outside/marker "outside"
func volumeFixture(t *testing.T) (vol, outside string) {
	t.Helper()
	dir := t.TempDir()
	vol, outside = filepath.Join(dir, "vol"), filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(vol, "a", "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(vol, "a", "b", "marker"), "inside")
	write(filepath.Join(vol, "file"), "a file")
	write(filepath.Join(outside, "marker"), "outside")
	for name, to := range map[string]string{"root": "/", "out": "../outside", "abs": "/etc", "m": "/", "rel": "a/b"} {
		if err := os.Symlink(to, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	return vol, outside
}

// fdPath is what the kernel says an fd names.
func fdPath(t *testing.T, fd int) string {
	t.Helper()
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// safeOpen refuses a link anywhere below the base and anything outside
// it, and opens plain paths.
func TestSafeOpen(t *testing.T) {
	t.Parallel()
	vol, _ := volumeFixture(t)
	for _, tc := range []struct {
		path    string
		wantErr string
	}{
		{"a/b", ""},
		{"a/b/marker", ""},
		{"file", ""},
		{".", ""},
		{"root", "unexpected symlink"},
		{"m/etc", "unexpected symlink"},
		{"abs", "unexpected symlink"},
		{"out", "unexpected symlink"},
		{"out/marker", "unexpected symlink"},
		{"rel", "unexpected symlink"}, // the caller resolves links first
		{"../outside", "outside of allowed base"},
		{"a/../../outside", "outside of allowed base"},
		{"missing", "no such file"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			fd, err := safeOpen(filepath.Join(vol, tc.path), vol)
			if tc.wantErr != "" {
				if err == nil {
					unix.Close(fd)
					t.Fatalf("opened %s, want error %q", tc.path, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if got, want := fdPath(t, fd), filepath.Join(vol, tc.path); got != want {
				t.Fatalf("fd names %s, want %s", got, want)
			}
		})
	}
}

// SafeMakeDir creates a missing subPath inside the volume with the
// volume's mode, and refuses to create anything through a link leading
// out.
func TestSafeMakeDir(t *testing.T) {
	t.Parallel()
	vol, outside := volumeFixture(t)
	if err := SafeMakeDir("new/deep/er", vol, 0o777); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(vol, "new", "deep", "er"))
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o777 {
		t.Fatalf("created %v %v, want a 0777 directory", st, err)
	}
	if err := SafeMakeDir("a/b", vol, 0o777); err != nil {
		t.Fatalf("existing directory: %v", err)
	}
	for _, sub := range []string{"out/new", "root/tmp/minik8s-subpath-escape", "m/new", "../outside/new"} {
		if err := SafeMakeDir(sub, vol, 0o777); err == nil {
			t.Errorf("SafeMakeDir(%q) succeeded, want refused", sub)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Fatalf("a directory was created outside the volume: %v", err)
	}
	if _, err := os.Stat("/tmp/minik8s-subpath-escape"); !os.IsNotExist(err) {
		t.Fatalf("a directory was created in the host's /tmp: %v", err)
	}
	if err := SafeMakeDir("file/sub", vol, 0o777); err == nil {
		t.Error("SafeMakeDir under a regular file succeeded")
	}
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
}

func readMarker(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "marker"))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// Prepare bind-mounts subPaths that stay inside the volume (links that
// stay inside included) and refuses every way out; Clean unmounts and
// removes the targets and leaves the volume's files alone.
func TestPrepareAndClean(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	vol, _ := volumeFixture(t)
	podDir := t.TempDir()
	for i, tc := range []struct {
		sub    string
		marker string // "" = refused
	}{
		{"a/b", "inside"},
		{"rel", "inside"},
		{"a", ""},
		{"root", ""},
		{"m/etc", ""},
		{"abs", ""},
		{"out", ""},
	} {
		sp := Subpath{VolumeMountIndex: i, Path: filepath.Join(vol, tc.sub), VolumeName: "v", VolumePath: vol, PodDir: podDir, ContainerName: "c"}
		target, err := Prepare(sp)
		switch {
		case tc.sub == "a":
			if err != nil {
				t.Fatalf("%s: %v", tc.sub, err)
			}
			if _, err := os.Stat(filepath.Join(target, "b", "marker")); err != nil {
				t.Errorf("%s: %v", tc.sub, err)
			}
		case tc.marker == "":
			if err == nil {
				t.Errorf("%s: mounted %s (marker %q), want refused", tc.sub, target, readMarker(t, target))
			}
			if _, err := os.Lstat(Target(sp)); !os.IsNotExist(err) {
				t.Errorf("%s: target left behind: %v", tc.sub, err)
			}
		default:
			if err != nil {
				t.Fatalf("%s: %v", tc.sub, err)
			}
			if target != Target(sp) {
				t.Errorf("%s: target %s, want %s", tc.sub, target, Target(sp))
			}
			if got := readMarker(t, target); got != tc.marker {
				t.Errorf("%s: marker %q, want %q", tc.sub, got, tc.marker)
			}
		}
	}
	// A regular file subPath is bound onto a file.
	fsp := Subpath{VolumeMountIndex: 9, Path: filepath.Join(vol, "file"), VolumeName: "v", VolumePath: vol, PodDir: podDir, ContainerName: "d"}
	ft, err := Prepare(fsp)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ft); string(b) != "a file" {
		t.Fatalf("file subPath reads %q", b)
	}
	// Preparing again (a restarted container) replaces the mount, not
	// stacks it.
	if _, err := Prepare(fsp); err != nil {
		t.Fatal(err)
	}
	if err := Clean(podDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(podDir, DirName)); !os.IsNotExist(err) {
		t.Fatalf("%s still there: %v", DirName, err)
	}
	if got := readMarker(t, filepath.Join(vol, "a", "b")); got != "inside" {
		t.Fatalf("the volume lost its files: marker %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(vol, "file")); string(b) != "a file" {
		t.Fatalf("the volume lost its file: %q", b)
	}
}

// A link swapped in after the check (CVE-2021-25741's shape): the fd the
// kubelet opened keeps naming the directory it checked, so the bind mount
// shows that directory, never the link's target; and an open after the
// swap fails.
func TestLinkSwappedAfterCheck(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	vol, outside := volumeFixture(t)
	podDir := t.TempDir()
	b := filepath.Join(vol, "a", "b")
	fd, err := safeOpen(b, vol)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// The container swaps the checked directory for a link out.
	if err := os.Rename(b, b+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, b); err != nil {
		t.Fatal(err)
	}
	if got := fdPath(t, fd); got != b+".old" {
		t.Fatalf("fd names %s, want %s", got, b+".old")
	}
	target := Target(Subpath{PodDir: podDir, VolumeName: "v", ContainerName: "c"})
	if err := bind(fd, target); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Clean(podDir) })
	if got := readMarker(t, target); got != "inside" {
		t.Fatalf("the mount shows marker %q, want the checked directory's %q", got, "inside")
	}
	// The swap seen before the open: refused.
	if fd2, err := safeOpen(b, vol); err == nil {
		unix.Close(fd2)
		t.Fatal("safeOpen followed the swapped-in link")
	}
	if _, err := Prepare(Subpath{VolumeMountIndex: 1, Path: b, VolumeName: "v", VolumePath: vol, PodDir: podDir, ContainerName: "c"}); err == nil {
		t.Fatal("Prepare mounted the swapped-in link")
	}
}
