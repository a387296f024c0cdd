package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// ns is the namespace of the lifecycle scenario.
const ns = "e2e"

// scenario is the state one lifecycle step hands the next.
type scenario struct {
	t   *testing.T
	c   *Cluster
	ctx context.Context
	// drained is the node drained (and then the one left running when the
	// other is stopped); other is the node whose container is stopped.
	drained, other string
}

// TestDeploymentLifecycle is the scenario, each step a subtest run
// in order; after a failed step the rest are reported as not run.
func TestDeploymentLifecycle(t *testing.T) {
	c := requireCluster(t)
	s := &scenario{c: c}
	s.runSteps(t, 6*time.Minute, nil, []step{
		{"NodesReady", s.nodesReady},
		{"ApplyDeployment", s.applyDeployment},
		{"PodsRunningOnBothNodes", s.podsRunningOnBothNodes},
		{"LogsAndHTTP", s.logsAndHTTP},
		{"Scale5Then2", s.scale},
		{"RolloutNewVersionAndUndo", s.rolloutAndUndo},
		{"CordonAndDrain", s.cordonAndDrain},
		{"StoppedNodeReschedules", s.stoppedNode},
		{"RestartComposeProject", s.restartProject},
		{"DeleteEverything", s.deleteEverything},
	})
}

// step is one named step of a scenario.
type step struct {
	name string
	fn   func()
}

// runSteps runs steps in order as subtests of t, each within timeout with
// s.t and s.ctx set for it; a failed step logs s.diagnose and what more
// adds, and the steps after it are reported as not run.
func (s *scenario) runSteps(t *testing.T, timeout time.Duration, more func(context.Context), steps []step) {
	for i, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			s.t, s.ctx = t, ctx
			defer func() {
				if t.Failed() {
					s.diagnose()
					if more != nil {
						more(ctx)
					}
				}
			}()
			st.fn()
		})
		if !ok {
			for _, rest := range steps[i+1:] {
				t.Run(rest.name, func(t *testing.T) { t.Skipf("not run: step %s failed", st.name) })
			}
			return
		}
	}
}

func (s *scenario) kubectl(args ...string) string {
	s.t.Helper()
	out, err := s.c.Kubectl(s.ctx, args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// within polls cond for up to d.
func (s *scenario) within(d time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	start := time.Now()
	if err := Poll(ctx, time.Second, what, cond); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("%s after %.1fs", what, time.Since(start).Seconds())
}

func (s *scenario) pods(ctx context.Context) ([]api.Pod, error) {
	var l api.List[api.Pod]
	if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", ns, "-l", "app=web"); err != nil {
		return nil, Retry(err)
	}
	return l.Items, nil
}

func (s *scenario) nodes(ctx context.Context) ([]api.Node, error) {
	var l api.List[api.Node]
	if err := s.c.KubectlJSON(ctx, &l, "get", "nodes"); err != nil {
		return nil, Retry(err)
	}
	return l.Items, nil
}

// live are the pods not being deleted.
func live(pods []api.Pod) []api.Pod {
	var out []api.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func running(p api.Pod) bool { return p.Status.Phase == api.PodRunning && p.Status.PodIP != "" }

func ready(n api.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// describe is a one-line summary of pods for timeout messages.
func describe(pods []api.Pod) string {
	var b []string
	for _, p := range pods {
		img := ""
		if len(p.Spec.Containers) > 0 {
			img = p.Spec.Containers[0].Image
		}
		del := ""
		if p.DeletionTimestamp != nil {
			del = ",terminating"
		}
		b = append(b, fmt.Sprintf("%s(%s%s,node=%s,ip=%s,%s)", p.Name, p.Status.Phase, del, p.Spec.NodeName, p.Status.PodIP, img))
	}
	return fmt.Sprintf("%d pods: %s", len(pods), strings.Join(b, " "))
}

// waitPods waits until exactly n pods exist (terminating ones included, so
// deleted pods must be gone), all Running with an IP, with image, on
// allowed nodes (any when empty).
func (s *scenario) waitPods(d time.Duration, n int, image string, allowed ...string) []api.Pod {
	s.t.Helper()
	var got []api.Pod
	s.within(d, fmt.Sprintf("%d Running pods of %s", n, image), func(ctx context.Context) (bool, string, error) {
		pods, err := s.pods(ctx)
		if err != nil {
			return false, "", err
		}
		if len(pods) != n {
			return false, describe(pods), nil
		}
		for _, p := range pods {
			if p.DeletionTimestamp != nil || !running(p) || p.Spec.Containers[0].Image != image ||
				(len(allowed) > 0 && !slices.Contains(allowed, p.Spec.NodeName)) {
				return false, describe(pods), nil
			}
		}
		got = pods
		return true, "", nil
	})
	return got
}

func (s *scenario) rolloutStatus() {
	s.t.Helper()
	s.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=180s")
}

// conditionTaints are the node.kubernetes.io/ taints of a node's
// conditions (not-ready, unreachable, ...) that keep pods off it; the node
// controller removes them a moment after the node turns Ready.
func conditionTaints(n api.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		if strings.HasPrefix(t.Key, "node.kubernetes.io/") && t.Key != "node.kubernetes.io/unschedulable" {
			out = append(out, t.Key+":"+string(t.Effect))
		}
	}
	return out
}

// nodesReady waits for every worker to be Ready, with a podCIDR and no
// condition taint, so that pods can land on each.
func (s *scenario) nodesReady() {
	s.within(2*time.Minute, fmt.Sprintf("%d Ready untainted nodes with podCIDRs", workers), func(ctx context.Context) (bool, string, error) {
		nodes, err := s.nodes(ctx)
		if err != nil {
			return false, "", err
		}
		var names []string
		n := 0
		for _, node := range nodes {
			names = append(names, fmt.Sprintf("%s(ready=%t,podCIDR=%s,taints=%v)", node.Name, ready(node), node.Spec.PodCIDR, conditionTaints(node)))
			if ready(node) && node.Spec.PodCIDR != "" && len(conditionTaints(node)) == 0 {
				n++
			}
		}
		return n >= workers, strings.Join(names, " "), nil
	})
}

func (s *scenario) applyDeployment() {
	manifest := filepath.Join(s.t.TempDir(), "ns.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.kubectl("apply", "-f", manifest)
	out := s.kubectl("apply", "-n", ns, "-f", filepath.Join(s.c.Root, "deploy", "examples", "web.yaml"))
	if !strings.Contains(out, "deployment.apps/web") || !strings.Contains(out, "service/web") {
		s.t.Fatalf("apply printed %q; want deployment.apps/web and service/web", out)
	}
	s.rolloutStatus()
}

func (s *scenario) podsRunningOnBothNodes() {
	pods := s.waitPods(2*time.Minute, 3, "minik8s/busybox:latest")
	nodes := map[string]bool{}
	_, cidr, _ := net.ParseCIDR("10.244.0.0/16")
	for _, p := range pods {
		nodes[p.Spec.NodeName] = true
		if ip := net.ParseIP(p.Status.PodIP); ip == nil || !cidr.Contains(ip) {
			s.t.Errorf("pod %s has IP %q, want one in the cluster CIDR %s", p.Name, p.Status.PodIP, cidr)
		}
	}
	if len(nodes) < 2 {
		s.t.Fatalf("3 replicas landed on %d node(s), want both: %s", len(nodes), describe(pods))
	}
}

// logsAndHTTP reads every pod's log and fetches its page from its node.
func (s *scenario) logsAndHTTP() {
	pods, err := s.pods(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, p := range live(pods) {
		want := "minik8s-httpd v1 serving on :8080 as " + p.Name
		s.within(time.Minute, "log of "+p.Name, func(ctx context.Context) (bool, string, error) {
			out, err := s.c.Kubectl(ctx, "logs", "-n", ns, p.Name)
			if err != nil {
				return false, "", Retry(err)
			}
			return strings.Contains(out, want), fmt.Sprintf("log %q, want a line %q", out, want), nil
		})
		// The node that runs the pod reaches it over its bridge. (Debian's
		// static busybox wget crashes with -T: timeout(1) bounds it.)
		page, err := s.c.Exec(s.ctx, p.Spec.NodeName, "timeout", "10", "busybox", "wget", "-q", "-O", "-", "http://"+p.Status.PodIP+":8080/")
		if err != nil {
			s.t.Errorf("GET pod %s at %s:8080 from %s: %v", p.Name, p.Status.PodIP, p.Spec.NodeName, err)
		} else if !strings.Contains(page, p.Name) || !strings.Contains(page, "version v1") {
			s.t.Errorf("pod %s served %q; want its name and version v1", p.Name, page)
		}
	}
}

func (s *scenario) scale() {
	s.kubectl("scale", "deployment/web", "-n", ns, "--replicas=5")
	s.rolloutStatus()
	s.waitPods(2*time.Minute, 5, "minik8s/busybox:latest")
	s.kubectl("scale", "deployment/web", "-n", ns, "--replicas=2")
	s.rolloutStatus()
	s.waitPods(2*time.Minute, 2, "minik8s/busybox:latest")
}

func (s *scenario) rolloutAndUndo() {
	s.kubectl("set", "image", "deployment/web", "-n", ns, "web=minik8s/busybox:v2")
	s.rolloutStatus()
	pods := s.waitPods(2*time.Minute, 2, "minik8s/busybox:v2")
	out, err := s.c.Kubectl(s.ctx, "logs", "-n", ns, pods[0].Name)
	if err != nil || !strings.Contains(out, "minik8s-httpd v2") {
		s.t.Errorf("log of %s after the rollout: %q, %v; want minik8s-httpd v2", pods[0].Name, out, err)
	}
	hist := s.kubectl("rollout", "history", "deployment/web", "-n", ns)
	if !strings.Contains(hist, "1") || !strings.Contains(hist, "2") {
		s.t.Errorf("rollout history %q; want revisions 1 and 2", hist)
	}
	s.kubectl("rollout", "undo", "deployment/web", "-n", ns)
	s.rolloutStatus()
	s.waitPods(2*time.Minute, 2, "minik8s/busybox:latest")
}

func (s *scenario) cordonAndDrain() {
	pods, err := s.pods(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	nodes, err := s.nodes(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	// Drain a node that runs a pod, so something has to move.
	s.drained = pods[0].Spec.NodeName
	for _, n := range names {
		if n != s.drained && s.other == "" {
			s.other = n
		}
	}
	if s.other == "" {
		s.t.Fatalf("no second node besides %s: %v", s.drained, names)
	}
	out := s.kubectl("cordon", s.drained)
	if !strings.Contains(out, "cordoned") {
		s.t.Errorf("cordon printed %q", out)
	}
	s.kubectl("drain", s.drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=120s")
	s.waitPods(2*time.Minute, 2, "minik8s/busybox:latest", s.other)
	var n api.Node
	if err := s.c.KubectlJSON(s.ctx, &n, "get", "node", s.drained); err != nil {
		s.t.Fatal(err)
	}
	if !n.Spec.Unschedulable {
		s.t.Errorf("node %s is not unschedulable after the drain", s.drained)
	}
	s.kubectl("uncordon", s.drained)
}

// stoppedNode stops the container of the node running every pod: the node
// controller marks it NotReady, taint eviction deletes its pods after their
// tolerationSeconds (30 s in the compose apiserver) and the ReplicaSet
// recreates them on the drained node. The stopped node comes back.
func (s *scenario) stoppedNode() {
	id, err := s.c.Container(s.ctx, s.other)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.c.Run(s.ctx, "docker", "stop", "-t", "10", id); err != nil {
		s.t.Fatal(err)
	}
	s.within(2*time.Minute, "node "+s.other+" NotReady", func(ctx context.Context) (bool, string, error) {
		var n api.Node
		if err := s.c.KubectlJSON(ctx, &n, "get", "node", s.other); err != nil {
			return false, "", Retry(err)
		}
		return !ready(n), fmt.Sprintf("conditions %+v", n.Status.Conditions), nil
	})
	s.within(4*time.Minute, "pods rescheduled off "+s.other, func(ctx context.Context) (bool, string, error) {
		pods, err := s.pods(ctx)
		if err != nil {
			return false, "", err
		}
		n := 0
		for _, p := range live(pods) {
			if p.Spec.NodeName == s.drained && running(p) {
				n++
			}
		}
		return n == 2, describe(pods), nil
	})
	if _, err := s.c.Run(s.ctx, "docker", "start", id); err != nil {
		s.t.Fatal(err)
	}
	s.nodesReady()
	// Back, the kubelet finishes the deletion of the pods it ran.
	s.waitPods(2*time.Minute, 2, "minik8s/busybox:latest", s.drained)
}

// restartProject restarts every container of the compose project and
// expects the same cluster back: the Deployment, the same pods re-adopted
// by the kubelets rather than replaced, and their containers serving again
// (a node container's restart kills every process it ran).
func (s *scenario) restartProject() {
	before, err := s.pods(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.c.ComposeRun(s.ctx, "restart"); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("compose restart took %.1fs", time.Since(start).Seconds())
	// Statuses written before the restart prove nothing: wait for each
	// kubelet to renew its Lease again.
	for _, node := range []string{s.drained, s.other} {
		s.within(2*time.Minute, "Lease of "+node+" renewed after the restart", func(ctx context.Context) (bool, string, error) {
			var l struct {
				Spec struct {
					RenewTime string `json:"renewTime"`
				} `json:"spec"`
			}
			if err := s.c.KubectlJSON(ctx, &l, "get", "lease", node, "-n", "kube-node-lease"); err != nil {
				return false, "", Retry(err)
			}
			t, err := time.Parse(time.RFC3339Nano, l.Spec.RenewTime)
			return err == nil && t.After(start), "renewTime " + l.Spec.RenewTime, nil
		})
	}
	s.nodesReady()
	names := func(ps []api.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		sort.Strings(out)
		return out
	}
	s.within(3*time.Minute, "the same pods serving again", func(ctx context.Context) (bool, string, error) {
		pods, err := s.pods(ctx)
		if err != nil {
			return false, "", err
		}
		if !slices.Equal(names(before), names(pods)) {
			return false, fmt.Sprintf("pods %v, before the restart %v", names(pods), names(before)), nil
		}
		for _, p := range pods {
			if !running(p) {
				return false, describe(pods), nil
			}
			page, err := s.c.Exec(ctx, p.Spec.NodeName, "timeout", "5", "busybox", "wget", "-q", "-O", "-", "http://"+p.Status.PodIP+":8080/")
			if err != nil || !strings.Contains(page, p.Name) {
				return false, fmt.Sprintf("GET %s (%s) from %s: %q %v", p.Name, p.Status.PodIP, p.Spec.NodeName, page, err), nil
			}
		}
		return true, "", nil
	})
	s.rolloutStatus()
}

// deleteEverything deletes the Deployment and expects every pod and every
// container of the namespace gone from both nodes' containerd.
func (s *scenario) deleteEverything() {
	s.kubectl("delete", "deployment", "web", "-n", ns)
	s.kubectl("delete", "service", "web", "-n", ns)
	s.within(2*time.Minute, "every pod deleted", func(ctx context.Context) (bool, string, error) {
		pods, err := s.pods(ctx)
		if err != nil {
			return false, "", err
		}
		return len(pods) == 0, describe(pods), nil
	})
	for _, node := range []string{s.drained, s.other} {
		s.within(time.Minute, "no containers of "+ns+" on "+node, func(ctx context.Context) (bool, string, error) {
			out, err := s.c.Exec(ctx, node, "ctr", "-n", runtimeNamespace(ctx, s.c, node), "containers", "ls", "-q",
				`labels."io.kubernetes.pod.namespace"==`+ns)
			if err != nil {
				return false, "", Retry(err)
			}
			return strings.TrimSpace(out) == "", "containers: " + strings.Join(strings.Fields(out), " "), nil
		})
	}
	s.kubectl("delete", "namespace", ns)
}

// diagnose logs what a failed step needs to be understood.
func (s *scenario) diagnose() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"get", "nodes", "-o", "wide"},
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "deployments,replicasets", "-n", ns},
		{"get", "events", "-n", ns},
	} {
		out, err := s.c.Kubectl(ctx, args...)
		if err != nil {
			out += err.Error()
		}
		s.t.Logf("kubectl-lite %s:\n%s", strings.Join(args, " "), out)
	}
	for _, svc := range []string{"scheduler", "controller-manager", "node-1", "node-2"} {
		s.t.Logf("last log lines of %s:\n%s", svc, s.c.Logs(ctx, svc, 25))
	}
}
