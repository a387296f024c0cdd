package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/network"
)

// hostNode is the node name this machine joins as.
const hostNode = "e2e-host"

// TestHostNode is the VM path on this machine: scripts/install-node.sh
// (without apt or systemd) joins the host's own containerd and a kubelet to
// the compose control plane with a bootstrap token and the CA hash, as a
// third node, and a pod runs there.
func TestHostNode(t *testing.T) {
	c := requireCluster(t)
	if os.Getenv("MINIK8S_E2E_HOST_NODE") == "0" {
		t.Skip("MINIK8S_E2E_HOST_NODE=0")
	}
	if os.Geteuid() != 0 {
		t.Skip("joining this machine as a node needs root")
	}
	if err := exec.Command("ctr", "--address", "/run/containerd/containerd.sock", "version").Run(); err != nil {
		t.Skipf("no containerd answering on /run/containerd/containerd.sock: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := c.Run(ctx, name, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// The apiserver container reaches the kubelet at the compose network's
	// gateway, which is this machine.
	gw := strings.TrimSpace(run("docker", "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}", c.Project+"_default"))
	gw = strings.Fields(gw + " ")[0]
	if gw == "" {
		t.Fatalf("no gateway address on network %s_default", c.Project)
	}
	join := strings.Fields(run(filepath.Join(c.Root, "bin", "kubectl-lite"), "--kubeconfig", c.Kubeconfig,
		"token", "create", "--ttl", "10m", "--description", "e2e host node", "--print-join-command"))
	if len(join) != 7 || join[0] != "kubelet" {
		t.Fatalf("unexpected join command %q", join)
	}
	dir, err := os.MkdirTemp("", "minik8s-e2e-host-")
	if err != nil {
		t.Fatal(err)
	}
	_, bridgeErr := exec.Command("ip", "link", "show", "cni0").CombinedOutput()
	hadBridge := bridgeErr == nil

	// The node's images come from the local Docker, as on the node containers.
	save := exec.CommandContext(ctx, "sh", "-c", "docker save minik8s/busybox:latest | ctr -n minik8s images import --platform linux/amd64 -")
	if out, err := save.CombinedOutput(); err != nil {
		t.Fatalf("import minik8s/busybox into the host's containerd: %v: %s", err, out)
	}

	pidfile, logfile := filepath.Join(dir, "kubelet.pid"), filepath.Join(dir, "kubelet.log")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// The kubelet must see the deletion to remove the container.
		if _, err := c.Kubectl(ctx, "delete", "pod", "host-pod", "-n", "default"); err == nil {
			_ = Poll(ctx, time.Second, "host-pod gone", func(ctx context.Context) (bool, string, error) {
				_, err := c.Kubectl(ctx, "get", "pod", "host-pod", "-n", "default")
				return err != nil && strings.Contains(err.Error(), "NotFound"), "", nil
			})
		}
		_, _ = c.Run(ctx, filepath.Join(c.Root, "scripts", "install-node.sh"), "--stop", "--pid-file", pidfile)
		// No kube-proxy was installed here (no --proxy-kubeconfig: the
		// DaemonSet's pod cannot pull its image on this node either), so
		// the kubelet's pod masquerade rule is all it left in iptables.
		if err := network.RemoveMasquerade(); err != nil {
			t.Logf("removing the host kubelet's pod masquerade rule: %v", err)
		}
		_, _ = c.Kubectl(ctx, "delete", "node", hostNode)
		if log, err := os.ReadFile(logfile); err == nil && t.Failed() {
			t.Logf("kubelet log:\n%s", tail(string(log), 40))
		}
		if !hadBridge {
			_ = exec.Command("ip", "link", "del", "cni0").Run()
		}
		_ = os.RemoveAll(dir)
	})
	args := append([]string{"--no-apt", "--no-systemd"}, join[1:]...)
	args = append(args, "--node-name", hostNode, "--node-ip", gw,
		"--kubelet", filepath.Join(c.Root, "bin", "kubelet"),
		"--root-dir", filepath.Join(dir, "kubelet"), "--cni-conf-dir", filepath.Join(dir, "cni"),
		"--pid-file", pidfile, "--log-file", logfile, "--wait", "60")
	run(filepath.Join(c.Root, "scripts", "install-node.sh"), args...)

	err = Poll(ctx, time.Second, "node "+hostNode+" Ready", func(ctx context.Context) (bool, string, error) {
		var n api.Node
		if err := c.KubectlJSON(ctx, &n, "get", "node", hostNode); err != nil {
			return false, "", Retry(err)
		}
		return ready(n) && n.Spec.PodCIDR != "", fmt.Sprintf("podCIDR %q, conditions %+v", n.Spec.PodCIDR, n.Status.Conditions), nil
	})
	if err != nil {
		t.Fatal(err)
	}

	manifest := filepath.Join(dir, "pod.yaml")
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: host-pod
  namespace: default
spec:
  nodeName: ` + hostNode + `
  terminationGracePeriodSeconds: 2
  containers:
    - name: web
      image: minik8s/busybox:latest
      imagePullPolicy: Never
`
	if err := os.WriteFile(manifest, []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", manifest); err != nil {
		t.Fatal(err)
	}
	err = Poll(ctx, time.Second, "host-pod Running", func(ctx context.Context) (bool, string, error) {
		var p api.Pod
		if err := c.KubectlJSON(ctx, &p, "get", "pod", "host-pod", "-n", "default"); err != nil {
			return false, "", Retry(err)
		}
		return running(p), fmt.Sprintf("phase %s ip %q", p.Status.Phase, p.Status.PodIP), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = Poll(ctx, time.Second, "host-pod log", func(ctx context.Context) (bool, string, error) {
		out, err := c.Kubectl(ctx, "logs", "host-pod", "-n", "default")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.Contains(out, "serving on :8080 as host-pod"), fmt.Sprintf("log %q", out), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
