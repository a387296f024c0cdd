package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// baseImage is the Debian image scripts/images.sh builds offline: a fresh
// Debian machine with none of the project's packages.
const baseImage = "minik8s/debian-base:bookworm"

// TestFreshMachine runs the first step of make up, scripts/deps.sh, on a
// fresh Debian machine (a container of the bare Debian base, the checkout
// and Go mounted read-only): as a user without root or sudo it says in one
// line what to run and fails; as root it installs the packages with one
// line saying what and why, starts dockerd from the package, and a second
// run does nothing.
func TestFreshMachine(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	run := func(script string, extra ...string) (string, error) {
		args := append([]string{"run", "--rm"}, extra...)
		args = append(args, "-v", c.Root+":/src:ro", "-v", goRoot(t)+":/usr/local/go:ro", baseImage, "bash", "-c", script)
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		return string(out), err
	}

	t.Run("NoRootNoSudo", func(t *testing.T) {
		out, err := run(`useradd -m newuser && su newuser -c "cd /src && scripts/deps.sh up"`)
		if err == nil {
			t.Fatalf("deps.sh as a user without sudo succeeded:\n%s", out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "run as root: apt-get install -y") || !strings.Contains(lines[0], "docker.io") {
			t.Fatalf("want one line with the apt-get command to run, got:\n%s", out)
		}
		t.Logf("%s", lines[0])
	})

	t.Run("RootInstallsAndStartsDockerd", func(t *testing.T) {
		// A node-like container: dockerd needs the capabilities, cgroups and
		// a storage directory that is not overlay on overlay.
		start := time.Now()
		out, err := run(`cd /src && scripts/deps.sh up && docker info --format 'dockerd {{.ServerVersion}}' && echo SECOND && scripts/deps.sh up && echo DONE`,
			"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
			"--device-cgroup-rule", "a *:* rwm", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw", "--tmpfs", "/run", "--tmpfs", "/var/lib/docker")
		if err != nil {
			t.Fatalf("deps.sh as root: %v\n%s", err, out)
		}
		first, second, ok := strings.Cut(out, "SECOND")
		if !ok || !strings.Contains(second, "DONE") {
			t.Fatalf("output:\n%s", out)
		}
		if !strings.Contains(first, "deps: installing with apt-get: ") || !strings.Contains(first, "docker.io (") ||
			!strings.Contains(first, "deps: starting dockerd") || !strings.Contains(first, "dockerd ") {
			t.Errorf("first run: want the install line, dockerd started and answering; got:\n%s", first)
		}
		if strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(second), "DONE")) != "" {
			t.Errorf("second run is not quiet (idempotent):\n%s", second)
		}
		t.Logf("fresh Debian to dockerd answering in %.1fs:\n%s", time.Since(start).Seconds(), first)
	})
}

// goRoot is the host's Go installation, mounted into the fresh machine.
func goRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
