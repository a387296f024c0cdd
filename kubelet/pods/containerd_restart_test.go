package pods_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/minik8s/minik8s/api"
)

// privateContainerd runs a containerd of the test's own (own root, state
// and socket, CRI plugin off) so the test may kill and restart it.
type privateContainerd struct {
	t      *testing.T
	dir    string
	config string
	sock   string
	cmd    *exec.Cmd
}

func startPrivateContainerd(t *testing.T) *privateContainerd {
	requireContainerd(t)
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("containerd binary not found")
	}
	dir, err := os.MkdirTemp("", "mk8s-ctrd-")
	if err != nil {
		t.Fatal(err)
	}
	p := &privateContainerd{t: t, dir: dir, sock: filepath.Join(dir, "containerd.sock"), config: filepath.Join(dir, "config.toml")}
	conf := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[metrics]
  address = ""
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), p.sock, p.sock+".ttrpc")
	if err := os.WriteFile(p.config, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	p.start()
	t.Cleanup(func() {
		p.kill()
		_ = syscall.Unmount(filepath.Join(dir, "root"), syscall.MNT_DETACH)
		_ = os.RemoveAll(dir)
	})
	return p
}

func (p *privateContainerd) start() {
	p.t.Helper()
	p.cmd = exec.Command("containerd", "--config", p.config, "--log-level", "warn")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := containerd.New(p.sock, containerd.WithTimeout(time.Second))
		if err == nil {
			ok, _ := c.IsServing(ctx)
			c.Close()
			if ok {
				return
			}
		}
		if ctx.Err() != nil {
			p.t.Fatal("private containerd did not come up")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill SIGKILLs containerd only; its shims and containers live on.
func (p *privateContainerd) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

func TestSurvivesContainerdRestart(t *testing.T) {
	ctrd := startPrivateContainerd(t)
	nd := newNode(t, func(nd *node) { nd.address = ctrd.sock })
	p := nd.create(nd.pod("steady", api.Container{Name: "main", Command: sh("while true; do echo tick; sleep 1; done")},
		api.Container{Name: "crasher", Command: sh("while [ ! -f /tmp/die ]; do sleep 0.2; done; exit 5")}))
	before := nd.waitPod("steady", 60*time.Second, "Running", running)

	ctrd.kill()
	time.Sleep(time.Second)
	ctrd.start()

	// The kubelet keeps going: same containers, and it still sees exits
	// (its task waits reconnect) and restarts the container.
	crasher := status(before, "crasher").ContainerID[len("containerd://"):]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, err := nd.rt.Exec(ctx, crasher, []string{"touch", "/tmp/die"}, false, nil, nil, nil, nil)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("exec after the containerd restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	after := nd.waitPod("steady", 60*time.Second, "crasher restarted", func(p *api.Pod) bool {
		return status(p, "crasher").RestartCount == 1 && running(p)
	})
	if status(after, "main").ContainerID != status(before, "main").ContainerID || status(after, "main").RestartCount != 0 {
		t.Fatalf("main changed: %s", statusString(after))
	}
	nd.waitFile(nd.logFile(p, "main", 0), "tick", 5*time.Second)
}
