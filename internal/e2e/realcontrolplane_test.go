package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/oracle"
)

// realNS is the namespace of TestRealControlPlane's workload.
const realNS = "e2e-real"

// TestRealControlPlane: with minik8s's scheduler and controller-manager
// stopped, the real kube-scheduler and kube-controller-manager v1.37 (make
// real-control-plane: deploy/compose/real-control-plane.yaml) run the
// cluster: the demo Deployment applied with the real kubectl becomes
// Running pods on the minik8s kubelets of both nodes, scheduled by the real
// scheduler, and their logs show no kind the apiserver does not serve and no
// encoding it refuses. Ours are put back at the end.
func TestRealControlPlane(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := filepath.Dir(oracle.Path(t, "kube-scheduler"))
	oracle.Path(t, "kube-controller-manager")
	kubectl := oracle.Path(t, "kubectl")
	t.Setenv("MINIK8S_ORACLE_DIR", dir)
	real := append(append([]string(nil), c.Compose...), "-f", "docker-compose.yaml",
		"-f", filepath.Join("deploy", "compose", "real-control-plane.yaml"), "--profile", "real-control-plane")
	compose := func(args ...string) {
		t.Helper()
		if _, err := c.Run(ctx, real[0], append(real[1:], args...)...); err != nil {
			t.Fatal(err)
		}
	}
	// Their /healthz, like ours, is HTTPS with a self-signed certificate,
	// which kubectl-lite in the image reads (busybox's TLS cannot talk to
	// it).
	healthy := func(service string, port int) func(context.Context) (bool, string, error) {
		return func(ctx context.Context) (bool, string, error) {
			out, err := c.Exec(ctx, service, "kubectl-lite", "--server", fmt.Sprintf("https://127.0.0.1:%d", port),
				"--insecure-skip-tls-verify", "get", "--raw", "/healthz")
			if err != nil {
				return false, err.Error(), nil
			}
			return out == "ok", out, nil
		}
	}

	if _, err := c.ComposeRun(ctx, "stop", "scheduler", "controller-manager"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_, _ = c.Kubectl(ctx, "delete", "namespace", realNS, "--wait=false")
		if _, err := c.Run(ctx, real[0], append(real[1:], "rm", "-s", "-f", "kube-scheduler", "kube-controller-manager")...); err != nil {
			t.Errorf("remove the real control plane: %v", err)
		}
		if _, err := c.ComposeRun(ctx, "up", "-d", "scheduler", "controller-manager"); err != nil {
			t.Errorf("start minik8s's scheduler and controller-manager again: %v", err)
		}
		for service, port := range map[string]int{"scheduler": 10259, "controller-manager": 10257} {
			if err := Poll(ctx, time.Second, service+" healthy again", healthy(service, port)); err != nil {
				t.Errorf("%v", err)
			}
		}
	})
	compose("up", "-d", "kube-scheduler", "kube-controller-manager")
	for service, port := range map[string]int{"kube-scheduler": 10259, "kube-controller-manager": 10257} {
		if err := Poll(ctx, time.Second, service+" /healthz ok", healthy(service, port)); err != nil {
			t.Fatalf("%v\n%s", err, c.Logs(ctx, service, 40))
		}
	}

	// The real kubectl (protobuf for create, JSON for apply) makes the
	// namespace and, once the real serviceaccount controller has given it
	// its default ServiceAccount (which admission wants of pods), applies
	// the demo workload.
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	if _, err := run("create", "namespace", realNS); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, time.Second, "the default ServiceAccount of "+realNS, func(ctx context.Context) (bool, string, error) {
		out, err := run("get", "serviceaccount", "default", "-n", realNS, "-o", "name")
		return err == nil, out, nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, c.Logs(ctx, "kube-controller-manager", 30))
	}
	if _, err := run("apply", "-n", realNS, "-f", filepath.Join(c.Root, "deploy", "examples", "web.yaml")); err != nil {
		t.Fatal(err)
	}
	var pods []api.Pod
	err := Poll(ctx, time.Second, "3 web pods Running on both nodes", func(ctx context.Context) (bool, string, error) {
		var l api.List[api.Pod]
		if err := c.KubectlJSON(ctx, &l, "get", "pods", "-n", realNS, "-l", "app=web"); err != nil {
			return false, "", Retry(err)
		}
		nodes := map[string]bool{}
		var states []string
		for _, p := range l.Items {
			states = append(states, p.Name+"@"+p.Spec.NodeName+":"+string(p.Status.Phase))
			if p.Status.Phase == api.PodRunning && p.DeletionTimestamp == nil {
				nodes[p.Spec.NodeName] = true
			}
		}
		pods = l.Items
		return len(l.Items) == 3 && len(nodes) == workers && !nodes[""], strings.Join(states, " "), nil
	})
	if err != nil {
		t.Fatalf("%v\nkube-scheduler:\n%s\nkube-controller-manager:\n%s", err,
			c.Logs(ctx, "kube-scheduler", 30), c.Logs(ctx, "kube-controller-manager", 30))
	}

	// Bound by the real scheduler: its events.k8s.io/v1 events.
	var events api.List[api.Event]
	if err := c.KubectlJSON(ctx, &events, "get", "events", "-n", realNS); err != nil {
		t.Fatal(err)
	}
	scheduled := map[string]bool{}
	for _, e := range events.Items {
		if e.Reason == "Scheduled" && e.ReportingController == "default-scheduler" {
			scheduled[e.InvolvedObject.Name] = true
		}
	}
	for _, p := range pods {
		if !scheduled[p.Name] {
			t.Errorf("no Scheduled event of default-scheduler for %s", p.Name)
		}
	}

	for _, service := range []string{"kube-scheduler", "kube-controller-manager"} {
		logs := c.Logs(ctx, service, 100000)
		// Not served, an encoding refused, or denied by the bootstrap RBAC policy.
		for _, bad := range []string{"the server could not find the requested resource", "Unsupported Media Type",
			`is forbidden: User "system:kube-`} {
			if strings.Contains(logs, bad) {
				t.Errorf("%s logged %q:\n%s", service, bad, grepLines(logs, bad))
			}
		}
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
