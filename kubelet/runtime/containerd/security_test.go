package containerd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestSecurityApplied runs containers with security contexts in a real
// containerd and reads back, from inside each, what the kernel applied:
// user and groups, capabilities, no_new_privs, seccomp, read-only root,
// masked paths and privileged mode. Each case has a twin without the
// setting, so a context the driver ignores fails the test.
func TestSecurityApplied(t *testing.T) {
	if _, err := os.Stat("/run/containerd/containerd.sock"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and containerd at /run/containerd/containerd.sock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	ns := fmt.Sprintf("minik8s-sec-%d", time.Now().UnixNano())
	rt, err := containerd.New(ctx, containerd.Config{Namespace: ns, StateDir: dir, CgroupParent: "/" + ns})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	defer func() {
		cs, _ := rt.ListPodContainers(context.Background(), "")
		for _, c := range cs {
			_ = rt.RemoveContainer(context.Background(), c.ID)
		}
		_ = testimage.DeleteNamespace(context.Background(), rt.Client(), ns)
		rt.RemovePodCgroups("sec")
		testimage.RemoveCgroupTree("/" + ns)
	}()
	if err := testimage.Import(namespaces.WithNamespace(ctx, ns), rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}
	sb, err := rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: "sec", PodNamespace: "default", PodName: "sec", Hostname: "sec"})
	if err != nil {
		t.Fatal(err)
	}
	seq := 0
	// run starts a container with sec running script and returns its
	// stdout once it exited.
	run := func(t *testing.T, sec runtime.Security, script string) string {
		t.Helper()
		seq++
		logPath := filepath.Join(dir, "logs", strconv.Itoa(seq)+".log")
		id, err := rt.CreateContainer(ctx, runtime.ContainerConfig{PodUID: "sec", PodNamespace: "default", PodName: "sec",
			Name: "c" + strconv.Itoa(seq), Image: testimage.Ref, ImageRef: testimage.Ref, Command: []string{"sh", "-c", script},
			NetNS: sb.NetNSPath(), LogPath: logPath, Security: sec})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			cs, err := rt.ListPodContainers(ctx, "sec")
			if err != nil {
				t.Fatal(err)
			}
			exited := false
			for _, c := range cs {
				exited = exited || (c.ID == id && c.State == runtime.StateExited)
			}
			if exited {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("container %s did not exit", id)
			}
		}
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.SplitN(line, " ", 4); len(f) == 4 && f[1] == "stdout" {
				out.WriteString(f[3] + "\n")
			}
		}
		return strings.TrimSpace(out.String())
	}
	status := func(field string) string {
		return fmt.Sprintf(`sed -n 's/^%s:[[:space:]]*//p' /proc/self/status`, field)
	}
	capEff := func(t *testing.T, out string) uint64 {
		t.Helper()
		v, err := strconv.ParseUint(out, 16, 64)
		if err != nil {
			t.Fatalf("CapEff %q: %v", out, err)
		}
		return v
	}
	const netRaw = 1 << 13
	masked, ro := runtime.DefaultMaskedPaths(), runtime.DefaultReadonlyPaths()
	root := runtime.Security{RunAsUser: new(int64), MaskedPaths: masked, ReadonlyPaths: ro}
	with := func(f func(*runtime.Security)) runtime.Security {
		s := root
		f(&s)
		return s
	}
	uid, gid := int64(1000), int64(3000)

	t.Run("user and groups", func(t *testing.T) {
		if got := run(t, root, "id -u; id -G"); got != "0\n0" {
			t.Errorf("root: %q", got)
		}
		sec := with(func(s *runtime.Security) {
			s.RunAsUser, s.RunAsGroup, s.SupplementalGroups = &uid, &gid, []int64{2000, 4000}
		})
		if got := run(t, sec, "id -u; id -g; id -G"); got != "1000\n3000\n3000 2000 4000" {
			t.Errorf("runAsUser 1000, runAsGroup 3000, groups 2000 4000: %q", got)
		}
		byName := with(func(s *runtime.Security) { s.RunAsUser, s.RunAsUsername = nil, "nobody" })
		if got := run(t, byName, "id -u; id -g"); got != "65534\n65534" {
			t.Errorf("user nobody from the image's /etc/passwd: %q", got)
		}
	})
	t.Run("capabilities", func(t *testing.T) {
		def := capEff(t, run(t, root, status("CapEff")))
		if def&netRaw == 0 {
			t.Fatalf("default CapEff %x lacks NET_RAW", def)
		}
		dropped := capEff(t, run(t, with(func(s *runtime.Security) { s.DropCapabilities = []string{"NET_RAW"} }), status("CapEff")))
		if dropped&netRaw != 0 || dropped != def&^netRaw {
			t.Errorf("drop NET_RAW: CapEff %x, default %x", dropped, def)
		}
		none := capEff(t, run(t, with(func(s *runtime.Security) {
			s.DropCapabilities, s.AddCapabilities = []string{"ALL"}, []string{"NET_BIND_SERVICE"}
		}), status("CapEff")))
		if none != 1<<10 {
			t.Errorf("drop ALL, add NET_BIND_SERVICE: CapEff %x", none)
		}
	})
	t.Run("no_new_privs", func(t *testing.T) {
		if got := run(t, root, status("NoNewPrivs")); got != "0" {
			t.Errorf("default NoNewPrivs %q", got)
		}
		if got := run(t, with(func(s *runtime.Security) { s.NoNewPrivs = true }), status("NoNewPrivs")); got != "1" {
			t.Errorf("allowPrivilegeEscalation false: NoNewPrivs %q", got)
		}
	})
	t.Run("seccomp", func(t *testing.T) {
		if got := run(t, root, status("Seccomp")); got != "0" {
			t.Errorf("Unconfined: Seccomp %q", got)
		}
		def := with(func(s *runtime.Security) { s.Seccomp = runtime.SecurityProfile{Type: runtime.ProfileRuntimeDefault} })
		if got := run(t, def, status("Seccomp")); got != "2" {
			t.Errorf("RuntimeDefault: Seccomp %q", got)
		}
	})
	t.Run("read-only root", func(t *testing.T) {
		if got := run(t, root, "touch /x && echo wrote"); got != "wrote" {
			t.Errorf("writable root: %q", got)
		}
		rofs := with(func(s *runtime.Security) { s.ReadOnlyRootfs = true })
		if got := run(t, rofs, "touch /x 2>/dev/null && echo wrote || echo refused"); got != "refused" {
			t.Errorf("readOnlyRootFilesystem: %q", got)
		}
	})
	// A masked path is a /dev/null (file) or tmpfs (directory) mount over
	// it; /proc/sys is remounted read-only.
	mounts := `grep -c ' /proc/keys ' /proc/self/mounts; grep ' /proc/sys ' /proc/self/mounts | grep -c '[ ,]ro[ ,]'; grep ' /sys ' /proc/self/mounts | grep -c ' ro[ ,]'`
	t.Run("masked paths", func(t *testing.T) {
		if got := run(t, root, mounts); got != "1\n1\n1" {
			t.Errorf("default procMount: /proc/keys masked, /proc/sys and /sys read-only: %q", got)
		}
		unmasked := with(func(s *runtime.Security) { s.MaskedPaths, s.ReadonlyPaths = []string{}, []string{} })
		if got := run(t, unmasked, mounts); got != "0\n0\n1" {
			t.Errorf("procMount Unmasked: %q", got)
		}
	})
	t.Run("privileged", func(t *testing.T) {
		self, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Fatal(err)
		}
		want := capEff(t, regexp.MustCompile(`(?m)^CapEff:\s*(\S+)`).FindStringSubmatch(string(self))[1])
		priv := with(func(s *runtime.Security) {
			s.Privileged, s.Seccomp = true, runtime.SecurityProfile{Type: runtime.ProfileRuntimeDefault}
		})
		out := strings.Split(run(t, priv, status("CapEff")+"; "+status("Seccomp")+"; "+mounts+"; ls /dev | wc -l"), "\n")
		if len(out) != 6 {
			t.Fatalf("privileged output %q", out)
		}
		if got := capEff(t, out[0]); got != want {
			t.Errorf("privileged CapEff %x, want the kubelet's %x", got, want)
		}
		if out[1] != "0" {
			t.Errorf("privileged: Seccomp %s, want no filter", out[1])
		}
		if out[2] != "0" || out[3] != "0" || out[4] != "0" {
			t.Errorf("privileged: /proc/keys masked / /proc/sys ro / /sys ro: %q", out[2:5])
		}
		hostDevs, _ := os.ReadDir("/dev")
		if n, _ := strconv.Atoi(out[5]); n < 20 || n < len(hostDevs)/2 {
			t.Errorf("privileged: %s entries in /dev, the host has %d", out[5], len(hostDevs))
		}
	})
}
