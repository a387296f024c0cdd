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

// TestFreshMachine runs make up on a fresh Debian machine: a container of
// the bare Debian base with the checkout and Go mounted read-only. As a
// user without root or sudo its first step says in one line what to run
// and fails; as root make up installs the packages with one line saying
// what and why, starts dockerd from the package, builds everything and
// brings up a cluster of Ready nodes inside; the installation step run
// again does nothing.
func TestFreshMachine(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	run := func(script string, extra ...string) (string, error) {
		args := append([]string{"run", "--rm"}, extra...)
		args = append(args, "-v", c.Root+":/src:ro", "-v", goEnv(t, "GOROOT")+":/usr/local/go:ro", baseImage, "bash", "-c", script)
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

	t.Run("MakeUp", func(t *testing.T) {
		// A node-like container (dockerd needs the capabilities, cgroups
		// and a storage directory that is not overlay on overlay) with Go
		// and make, as a new user has them. The host's module cache
		// (read-only, no proxy) and build cache stand in for the network.
		mod, cache := goEnv(t, "GOMODCACHE"), goEnv(t, "GOCACHE")
		start := time.Now()
		out, err := run(`set -e
apt-get update -qq && apt-get install -y -qq make >/dev/null 2>&1
cp -a /src /work && cd /work && rm -rf bin .minik8s
make up
echo NODES
bin/kubectl-lite --kubeconfig .minik8s/kubeconfig get nodes --no-headers
echo SECOND
scripts/deps.sh up
echo DONE`,
			"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
			"--device-cgroup-rule", "a *:* rwm", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw", "--tmpfs", "/run", "-v", "/var/lib/docker",
			"-v", mod+":/root/go/pkg/mod:ro", "-v", cache+":/root/.cache/go-build", "-e", "GOPROXY=off", "-e", "GOFLAGS=-buildvcs=false")
		if err != nil {
			t.Fatalf("make up on a fresh Debian machine: %v\n%s", err, out)
		}
		first, second, ok := strings.Cut(out, "SECOND")
		if !ok || !strings.Contains(second, "DONE") {
			t.Fatalf("output:\n%s", out)
		}
		if !strings.Contains(first, "deps: installing with apt-get: ") || !strings.Contains(first, "docker.io (") ||
			!strings.Contains(first, "deps: starting dockerd") {
			t.Errorf("make up: want the install line and dockerd started; got:\n%s", first)
		}
		_, nodes, _ := strings.Cut(first, "NODES")
		if ready := strings.Count(nodes, " Ready "); ready != workers {
			t.Errorf("make up: %d Ready nodes, want %d:\n%s", ready, workers, nodes)
		}
		if strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(second), "DONE")) != "" {
			t.Errorf("deps.sh again is not quiet (idempotent):\n%s", second)
		}
		t.Logf("fresh Debian machine to %d Ready nodes with make up in %.1fs", workers, time.Since(start).Seconds())
	})
}

// goEnv is a variable of the host's Go (go env NAME).
func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env %s: %q %v", name, out, err)
	}
	return strings.TrimSpace(string(out))
}
