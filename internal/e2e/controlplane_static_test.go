package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// TestControlPlaneStaticPods is kubeadm's layout on a fresh machine: a
// container of the node image (containerd, no kubelet running) gets the
// control plane's images in containerd and runs
// scripts/install-control-plane.sh --static-pods. The apiserver, scheduler
// and controller-manager then run as static pods of a kubelet on that
// machine, show in kube-system as mirror pods of a node labelled and
// tainted node-role.kubernetes.io/control-plane, and serve: a Deployment
// applied there gets its pods created and scheduled. A manifest removed
// stops its pod and its mirror pod goes; put back, both return. --stop
// stops the control plane and the kubelet.
func TestControlPlaneStaticPods(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const name, node = "minik8s-e2e-static-cp", "static-cp"
	docker := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	inside := func(script string) (string, error) { return docker("exec", name, "bash", "-c", script) }
	_, _ = docker("rm", "-fv", name)
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := inside("tail -n 40 /var/log/minik8s-kubelet.log"); err == nil {
				t.Logf("kubelet log:\n%s", out)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = exec.CommandContext(ctx, "docker", "rm", "-fv", name).Run()
	})
	// A machine like a compose node (the capabilities, cgroups, a
	// containerd directory that is not overlay on overlay), running only
	// containerd.
	if _, err := docker("run", "-d", "--name", name, "--hostname", node,
		"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--device-cgroup-rule", "a *:* rwm", "--tmpfs", "/run", "--tmpfs", "/tmp", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
		"-v", "/var/lib/containerd", "-v", c.Root+":/src:ro", "--entrypoint", "bash", "minik8s/node:latest", "-c",
		"mkdir -p /run/containerd && exec containerd --config /etc/containerd/config.toml"); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, 500*time.Millisecond, "containerd in "+name, func(ctx context.Context) (bool, string, error) {
		out, err := inside("ctr version")
		return err == nil, out, nil
	}); err != nil {
		t.Fatal(err)
	}
	images := "minik8s/apiserver:latest minik8s/scheduler:latest minik8s/controller-manager:latest"
	load := exec.CommandContext(ctx, "sh", "-c", "docker save "+images+" | docker exec -i "+name+" ctr -n minik8s images import --platform linux/amd64 -")
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("loading %s: %v: %s", images, err, out)
	}
	ip, err := docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", name)
	if err != nil {
		t.Fatal(err)
	}
	ip = strings.TrimSpace(ip)
	start := time.Now()
	out, err := inside("/src/scripts/install-control-plane.sh --static-pods --no-systemd --bin-dir /src/bin --node-name " + node + " --advertise-address " + ip)
	if err != nil {
		t.Fatalf("install-control-plane.sh --static-pods: %v\n%s", err, out)
	}
	t.Logf("install-control-plane.sh --static-pods: control plane up in %v", time.Since(start).Round(100*time.Millisecond))
	kubectl := func(args ...string) (string, error) {
		return inside("kubectl-lite --kubeconfig /etc/minik8s/admin.kubeconfig " + strings.Join(args, " "))
	}

	mirrors := []string{"kube-apiserver-" + node, "kube-controller-manager-" + node, "kube-scheduler-" + node}
	if err := Poll(ctx, time.Second, "the control plane's mirror pods Running and Ready", func(ctx context.Context) (bool, string, error) {
		out, err := kubectl("get", "pods", "-n", "kube-system", "-o", "json")
		if err != nil {
			return false, out, nil
		}
		var list api.PodList
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &list); err != nil {
			return false, "", err
		}
		seen := map[string]api.Pod{}
		for _, p := range list.Items {
			seen[p.Name] = p
		}
		for _, m := range mirrors {
			p, ok := seen[m]
			if !ok {
				return false, "no pod " + m, nil
			}
			if p.Annotations["kubernetes.io/config.mirror"] == "" || p.Annotations["kubernetes.io/config.source"] != "file" {
				return false, "", fmt.Errorf("pod %s is not a mirror pod of a file: annotations %v", m, p.Annotations)
			}
			if p.Spec.NodeName != node || !p.Spec.HostNetwork {
				return false, "", fmt.Errorf("pod %s: nodeName %q hostNetwork %v", m, p.Spec.NodeName, p.Spec.HostNetwork)
			}
			if !running(p) || !podReady(p) {
				return false, fmt.Sprintf("%s phase %s", m, p.Status.Phase), nil
			}
		}
		return true, "", nil
	}); err != nil {
		t.Fatal(err)
	}
	out, err = kubectl("get", "pods", "-n", "kube-system", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl-lite get pods -n kube-system -o wide:\n%s", out)

	var n api.Node
	out, err = kubectl("get", "node", node, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &n); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; !ok {
		t.Errorf("node %s labels %v: no node-role.kubernetes.io/control-plane", node, n.Labels)
	}
	tainted := false
	for _, tn := range n.Spec.Taints {
		tainted = tainted || tn.Key == "node-role.kubernetes.io/control-plane" && tn.Effect == "NoSchedule"
	}
	if !tainted {
		t.Errorf("node %s taints %+v: no node-role.kubernetes.io/control-plane:NoSchedule", node, n.Spec.Taints)
	}

	// The controller-manager and the scheduler serve: a Deployment's pod
	// is created and, tolerating the taint, bound to the node.
	if _, err := inside(`cat <<'EOF2' | kubectl-lite --kubeconfig /etc/minik8s/admin.kubeconfig apply -f -
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
      containers: [{name: web, image: minik8s/apiserver:latest, imagePullPolicy: Never, command: [/bin/busybox, sleep, "3600"]}]
EOF2`); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, time.Second, "the Deployment's pod bound to "+node, func(ctx context.Context) (bool, string, error) {
		out, err := kubectl("get", "pods", "-n", "default", "-l", "app=web", "-o", "jsonpath='{.items[*].spec.nodeName}'")
		return err == nil && strings.TrimSpace(out) == node, out, nil
	}); err != nil {
		t.Fatal(err)
	}

	// The scheduler's manifest removed: its pod stops, its mirror pod
	// goes; put back, both return.
	if _, err := inside("mv /etc/kubernetes/manifests/kube-scheduler.yaml /root/"); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, time.Second, "kube-scheduler's mirror pod gone", func(ctx context.Context) (bool, string, error) {
		out, err := kubectl("get", "pod", "-n", "kube-system", "kube-scheduler-"+node)
		return err != nil && strings.Contains(out, "NotFound"), out, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := inside("mv /root/kube-scheduler.yaml /etc/kubernetes/manifests/"); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, time.Second, "kube-scheduler's mirror pod back", func(ctx context.Context) (bool, string, error) {
		out, err := kubectl("get", "pod", "-n", "kube-system", "kube-scheduler-"+node, "-o", "jsonpath='{.status.phase}'")
		return err == nil && strings.Contains(out, "Running"), out, nil
	}); err != nil {
		t.Fatal(err)
	}

	// --stop takes the manifests away (the kubelet stops the three
	// components), then stops the kubelet.
	if out, err := inside("/src/scripts/install-control-plane.sh --stop"); err != nil {
		t.Fatalf("install-control-plane.sh --stop: %v\n%s", err, out)
	}
	if out, err := inside("pgrep -af '^/usr/local/bin/(apiserver|scheduler|controller-manager|kubelet)( |$)'"); err == nil {
		t.Errorf("after --stop, still running: %s", out)
	}
}
