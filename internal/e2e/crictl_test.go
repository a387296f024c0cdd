package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// crictlNode is the compose node whose runtime crictl is compared with the API.
const crictlNode = "node-1"

// criPodList is the part of `crictl pods -o json` (CRI ListPodSandbox) the
// test reads.
type criPodList struct {
	Items []struct {
		ID       string `json:"id"`
		State    string `json:"state"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			UID       string `json:"uid"`
		} `json:"metadata"`
	} `json:"items"`
}

// runtimeNamespace is the containerd namespace of the kubelet's pods on a
// compose node: k8s.io (containerd's CRI plugin's) when the node runs the
// kubelet on CRI (MINIK8S_CONTAINER_RUNTIME=cri), else minik8s (the native
// driver's). Both label containers with kube's io.kubernetes.* labels.
func runtimeNamespace(ctx context.Context, c *Cluster, node string) string {
	if mode, err := c.Exec(ctx, node, "printenv", "MINIK8S_CONTAINER_RUNTIME"); err == nil && strings.TrimSpace(mode) == "cri" {
		return "k8s.io"
	}
	return "minik8s"
}

// TestCrictl: crictl, on every node with /etc/crictl.yaml
// (deploy/node/crictl.yaml), talks to containerd's CRI plugin, which is on
// in either runtime mode. With the kubelet on CRI
// (MINIK8S_CONTAINER_RUNTIME=cri make up) crictl shows what the cluster
// runs on the node: the same pods as the API, the same logs as
// kubectl-lite logs, and ps, inspectp, images, stats and exec work on them.
// With the native driver the kubelet's pods live in containerd namespace
// minik8s, which CRI does not show: that part is skipped, saying so.
func TestCrictl(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	crictl := func(ctx context.Context, args ...string) (string, error) {
		return c.Exec(ctx, crictlNode, append([]string{"crictl"}, args...)...)
	}
	mode, err := c.Exec(ctx, crictlNode, "printenv", "MINIK8S_CONTAINER_RUNTIME")
	if err != nil {
		t.Fatalf("the runtime mode of %s: %v", crictlNode, err)
	}
	mode = strings.TrimSpace(mode)
	t.Logf("%s runs the kubelet in runtime mode %q", crictlNode, mode)

	t.Run("RuntimeAndImages", func(t *testing.T) {
		out, err := crictl(ctx, "version")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "RuntimeName:  containerd") || !strings.Contains(out, "RuntimeApiVersion:  v1") {
			t.Errorf("crictl version: want containerd speaking CRI v1, got\n%s", out)
		}
		var info struct {
			Status struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status bool   `json:"status"`
				} `json:"conditions"`
			} `json:"status"`
			Config struct {
				SandboxImage string `json:"sandboxImage"`
			} `json:"config"`
		}
		// NetworkReady follows the kubelet's conflist (written once the
		// Node has its podCIDR), which every node has by now.
		within(t, ctx, 30*time.Second, "crictl info: RuntimeReady and NetworkReady", func(ctx context.Context) (bool, string, error) {
			out, err := crictl(ctx, "info")
			if err != nil {
				return false, "", Retry(err)
			}
			if err := json.Unmarshal([]byte(out), &info); err != nil {
				return false, "", fmt.Errorf("crictl info: %w", err)
			}
			ok := 0
			for _, cond := range info.Status.Conditions {
				if (cond.Type == "RuntimeReady" || cond.Type == "NetworkReady") && cond.Status {
					ok++
				}
			}
			return ok == 2, fmt.Sprintf("%+v", info.Status.Conditions), nil
		})
		out, err = crictl(ctx, "images")
		if err != nil {
			t.Fatal(err)
		}
		// The sandbox image (imported at node start) and the workload
		// images (scripts/load-image.sh), in either mode.
		sandbox := strings.SplitN(info.Config.SandboxImage, ":", 2)
		for _, want := range [][]string{sandbox, {"docker.io/minik8s/busybox", "latest"}, {"docker.io/minik8s/kube-proxy", "latest"}} {
			found := false
			for line := range strings.Lines(out) {
				if f := strings.Fields(line); len(f) >= 2 && len(want) == 2 && f[0] == want[0] && f[1] == want[1] {
					found = true
				}
			}
			if !found {
				t.Errorf("crictl images: no %s; got\n%s", strings.Join(want, ":"), out)
			}
		}
	})

	// In either mode: exec, attach and port-forward through the API
	// server and the kubelet (in CRI mode, through the runtime's streaming
	// server, which the kubelet proxies).
	t.Run("ExecAttachPortForward", func(t *testing.T) { streamsThroughKubelet(t, ctx, c) })

	t.Run("PodsAsTheAPIShowsThem", func(t *testing.T) {
		if mode != "cri" {
			t.Skipf("MINIK8S_CONTAINER_RUNTIME is %q, not cri: the kubelet drives containerd through its Go client in namespace minik8s, whose pods CRI (and so crictl) does not list; MINIK8S_CONTAINER_RUNTIME=cri runs this part", mode)
		}
		crictlPods(t, ctx, c, crictl)
	})
}

// crictlPods runs a pod on crictlNode and compares what crictl shows with
// what the API shows.
func crictlPods(t *testing.T, ctx context.Context, c *Cluster, crictl func(context.Context, ...string) (string, error)) {
	const ns = "e2e-crictl"
	podOnCrictlNode(t, ctx, c, ns, "talker", `
  - name: talk
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo first line; echo second line from $(hostname); exec sleep 3600"]
`)
	var pod api.Pod
	within(t, ctx, 90*time.Second, "pod talker Running", func(ctx context.Context) (bool, string, error) {
		if err := c.KubectlJSON(ctx, &pod, "get", "pod", "talker", "-n", ns); err != nil {
			return false, "", Retry(err)
		}
		return running(pod), string(pod.Status.Phase), nil
	})

	// crictl pods (Ready sandboxes) = the API's live pods on the node, by
	// namespace/name (a static pod's sandbox carries its own UID, not its
	// mirror's). Pods come and go (add-ons): poll until both agree.
	var apiNames, criNames []string
	var sandboxID string
	within(t, ctx, 60*time.Second, "crictl pods = kubectl-lite get pods on "+crictlNode, func(ctx context.Context) (bool, string, error) {
		var list api.PodList
		if err := c.KubectlJSON(ctx, &list, "get", "pods", "-A", "--field-selector", "spec.nodeName="+crictlNode); err != nil {
			return false, "", Retry(err)
		}
		apiNames = apiNames[:0]
		for _, p := range list.Items {
			if p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed && p.DeletionTimestamp == nil {
				apiNames = append(apiNames, p.Namespace+"/"+p.Name)
			}
		}
		out, err := crictl(ctx, "pods", "--state", "Ready", "-o", "json")
		if err != nil {
			return false, "", Retry(err)
		}
		var pods criPodList
		if err := json.Unmarshal([]byte(out), &pods); err != nil {
			return false, "", fmt.Errorf("crictl pods -o json: %w", err)
		}
		criNames = criNames[:0]
		for _, p := range pods.Items {
			criNames = append(criNames, p.Metadata.Namespace+"/"+p.Metadata.Name)
			if p.Metadata.Namespace == ns && p.Metadata.Name == "talker" && p.Metadata.UID == string(pod.UID) {
				sandboxID = p.ID
			}
		}
		slices.Sort(apiNames)
		slices.Sort(criNames)
		return slices.Equal(apiNames, criNames) && sandboxID != "",
			fmt.Sprintf("API %v, crictl %v", apiNames, criNames), nil
	})
	t.Logf("crictl pods and the API agree on %s: %v", crictlNode, criNames)
	if out, err := c.Kubectl(ctx, "get", "pods", "-A", "-o", "wide", "--field-selector", "spec.nodeName="+crictlNode); err == nil {
		t.Logf("kubectl-lite get pods -A -o wide --field-selector spec.nodeName=%s:\n%s", crictlNode, out)
	}
	if out, err := crictl(ctx, "pods", "--namespace", ns); err == nil {
		t.Logf("crictl pods --namespace %s:\n%s", ns, out)
	}

	// inspectp: the sandbox's IP is the pod's.
	out, err := crictl(ctx, "inspectp", sandboxID)
	if err != nil {
		t.Fatal(err)
	}
	var inspect struct {
		Status struct {
			State   string `json:"state"`
			Network struct {
				IP string `json:"ip"`
			} `json:"network"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &inspect); err != nil {
		t.Fatalf("crictl inspectp: %v", err)
	}
	if inspect.Status.State != "SANDBOX_READY" || inspect.Status.Network.IP != pod.Status.PodIP {
		t.Errorf("crictl inspectp: state %s, IP %s; want SANDBOX_READY and the pod's IP %s", inspect.Status.State, inspect.Status.Network.IP, pod.Status.PodIP)
	}

	// ps: the container, Running, in that sandbox.
	out, err = crictl(ctx, "ps", "--pod", sandboxID, "--name", "^talk$", "-q")
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(out)
	if len(ids) != 1 {
		t.Fatalf("crictl ps --pod %s --name talk: want one container, got %q", sandboxID, out)
	}
	cid := ids[0]
	if pod.Status.ContainerStatuses[0].ContainerID != "containerd://"+cid {
		t.Errorf("crictl ps: container %s; the pod's status says %s", cid, pod.Status.ContainerStatuses[0].ContainerID)
	}
	if out, err := crictl(ctx, "ps", "--pod", sandboxID); err != nil || !strings.Contains(out, "Running") {
		t.Errorf("crictl ps --pod %s: want the container Running, got %v\n%s", sandboxID, err, out)
	}

	// logs: what kubectl-lite logs prints.
	want, err := c.Kubectl(ctx, "logs", "talker", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	got, err := crictl(ctx, "logs", cid)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || !strings.Contains(got, "second line from talker") {
		t.Errorf("crictl logs %s:\n%q\nkubectl-lite logs:\n%q", cid, got, want)
	}

	// exec: in the pod's container (its hostname is the pod's name).
	if out, err := crictl(ctx, "exec", cid, "hostname"); err != nil || strings.TrimSpace(out) != "talker" {
		t.Errorf("crictl exec %s hostname: %v %q; want talker", cid, err, out)
	}

	// stats: the container's CPU and memory.
	within(t, ctx, 30*time.Second, "crictl stats lists the container", func(ctx context.Context) (bool, string, error) {
		out, err := crictl(ctx, "stats", "-o", "json", "--id", cid)
		if err != nil {
			return false, "", Retry(err)
		}
		var stats struct {
			Stats []struct {
				Attributes struct {
					ID string `json:"id"`
				} `json:"attributes"`
			} `json:"stats"`
		}
		if err := json.Unmarshal([]byte(out), &stats); err != nil {
			return false, "", fmt.Errorf("crictl stats -o json: %w", err)
		}
		return len(stats.Stats) == 1 && stats.Stats[0].Attributes.ID == cid,
			strings.TrimSpace(out), nil
	})

	// images: the pod's image.
	if out, err := crictl(ctx, "images", "-o", "json"); err != nil || !strings.Contains(out, `"docker.io/minik8s/busybox:latest"`) {
		t.Errorf("crictl images: want the pod's image docker.io/minik8s/busybox:latest (status imageID %s), got %v\n%s", pod.Status.ContainerStatuses[0].ImageID, err, out)
	}

	// Deleted through the API, the pod's sandbox goes from crictl pods.
	if _, err := c.Kubectl(ctx, "delete", "pod", "talker", "-n", ns); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 60*time.Second, "talker's sandbox no longer Ready", func(ctx context.Context) (bool, string, error) {
		out, err := crictl(ctx, "pods", "--namespace", ns, "--state", "Ready", "-q")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.TrimSpace(out) == "", out, nil
	})
}

// podOnCrictlNode applies namespace ns and in it pod name on crictlNode
// with the containers of containersYAML (list items indented by two), and
// deletes the namespace when the test ends.
func podOnCrictlNode(t *testing.T, ctx context.Context, c *Cluster, ns, name, containersYAML string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = c.Kubectl(ctx, "delete", "namespace", ns, "--ignore-not-found", "--wait=false")
	})
	manifest := `apiVersion: v1
kind: Namespace
metadata:
  name: ` + ns + `
---
apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
  namespace: ` + ns + `
spec:
  nodeName: ` + crictlNode + `
  terminationGracePeriodSeconds: 2
  containers:` + containersYAML
	if out, err := c.RunInput(ctx, []byte(manifest), filepath.Join(c.Root, "bin", "kubectl-lite"), "--kubeconfig", c.Kubeconfig, "apply", "-f", "-"); err != nil {
		t.Fatalf("apply: %v: %s", err, out)
	}
}

// streamsThroughKubelet runs a pod on crictlNode and uses kubectl-lite
// exec, attach and port-forward on it.
func streamsThroughKubelet(t *testing.T, ctx context.Context, c *Cluster) {
	const ns = "e2e-streams"
	podOnCrictlNode(t, ctx, c, ns, "web", `
  - name: web
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
  - name: echo
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    stdin: true
    command: ["sh", "-c", "while read l; do echo got:$l; done; sleep 3600"]
`)
	within(t, ctx, 90*time.Second, "pod web Ready", func(ctx context.Context) (bool, string, error) {
		var pod api.Pod
		if err := c.KubectlJSON(ctx, &pod, "get", "pod", "web", "-n", ns); err != nil {
			return false, "", Retry(err)
		}
		return podReady(pod), string(pod.Status.Phase), nil
	})

	out, err := c.Kubectl(ctx, "exec", "web", "-n", ns, "-c", "web", "--", "cat", "/www/version")
	if err != nil || out != "web v1\n" {
		t.Errorf("kubectl-lite exec web -- cat /www/version: %v %q; want \"web v1\\n\"", err, out)
	}
	if out, err := c.Kubectl(ctx, "exec", "web", "-n", ns, "-c", "web", "--", "sh", "-c", "exit 3"); err == nil || !regexp.MustCompile(`exit (status|code) 3`).MatchString(err.Error()) {
		t.Errorf("kubectl-lite exec -- sh -c 'exit 3': want exit status 3, got %v %q", err, out)
	}

	// attach: what goes to the container's stdin reaches it (its answer
	// is in its log). Whether the answer also comes back on the attach
	// session once stdin ends is the runtime's: containerd's CRI plugin
	// ends the session at stdin's EOF (crictl attach alike), the native
	// driver keeps it open (until the context below ends it).
	actx, cancel := context.WithTimeout(ctx, 8*time.Second)
	out, err = c.RunInput(actx, []byte("hello\n"), filepath.Join(c.Root, "bin", "kubectl-lite"), "--kubeconfig", c.Kubeconfig, "attach", "-i", "web", "-n", ns, "-c", "echo")
	cancel()
	t.Logf("kubectl-lite attach -i web -c echo <<< hello: %v, output %q", err, out)
	within(t, ctx, 20*time.Second, "the attached container's answer in its log", func(ctx context.Context) (bool, string, error) {
		logs, err := c.Kubectl(ctx, "logs", "web", "-n", ns, "-c", "echo")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.Contains(logs, "got:hello"), logs, nil
	})

	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pf := exec.CommandContext(pctx, filepath.Join(c.Root, "bin", "kubectl-lite"), "--kubeconfig", c.Kubeconfig, "port-forward", "-n", ns, "pod/web", ":8080")
	stdout, err := pf.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pf.Process.Kill(); _ = pf.Wait() }()
	port := ""
	sc := bufio.NewScanner(stdout)
	re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 8080`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
			break
		}
	}
	if port == "" {
		t.Fatalf("kubectl-lite port-forward pod/web :8080 printed no local port")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	req, _ := http.NewRequestWithContext(pctx, http.MethodGet, "http://127.0.0.1:"+port+"/version", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET through port-forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "web v1\n" {
		t.Errorf("GET /version through port-forward: %d %q; want 200 \"web v1\\n\"", resp.StatusCode, body)
	}
}
