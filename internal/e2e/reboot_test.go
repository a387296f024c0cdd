package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// rebootNS is the namespace of the cluster-restart scenario.
const rebootNS = "e2e-reboot"

// rebootManifest is two backends behind a Service and a client pod on
// every node (for nslookup and wget).
func rebootManifest(nodes []api.Node) string {
	m := webManifest(rebootNS, 2)
	for _, n := range nodes {
		m += "---\n" + clientManifest(rebootNS, n.Name)
	}
	return m
}

// stuckManifest is a pod whose volume's ConfigMap does not exist yet.
const stuckManifest = `apiVersion: v1
kind: Pod
metadata:
  name: stuck
  namespace: ` + rebootNS + `
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: minik8s/busybox:latest
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", "cat /config/greeting; sleep 86400"]
      volumeMounts:
        - name: config
          mountPath: /config
  volumes:
    - name: config
      configMap:
        name: settings
`

// TestClusterRestart is the README's stop/start cycle, which is a reboot
// of every node: make down && make up removes the node containers (their
// containerd loses every task, the compose network and so the node
// addresses change) and starts them again. Every pod comes back Running,
// restarted in place with restartCount + 1, cluster DNS answers, Services
// route, pod routes point at the nodes' new addresses and nothing of the
// old boot is left on the nodes. It starts with a pod stuck on a missing
// ConfigMap, whose reason describe must show.
func TestClusterRestart(t *testing.T) {
	c := requireCluster(t)
	s := &netScenario{scenario: &scenario{c: c}, clients: map[string]api.Pod{}}
	var before map[string]int32
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(ctx, "delete", "namespace", rebootNS); err != nil {
			t.Logf("delete namespace %s: %v", rebootNS, err)
		}
	})
	s.runSteps(t, 6*time.Minute, func(ctx context.Context) {
		out, _ := c.Kubectl(ctx, "get", "pods,events", "-n", rebootNS, "-o", "wide")
		s.t.Logf("kubectl-lite get pods,events -n %s:\n%s", rebootNS, out)
	}, []step{
		{"Setup", s.rebootSetup},
		{"StuckPodSaysWhy", s.stuckPod},
		{"MakeDownMakeUp", func() { before = s.restartCluster() }},
		{"PodsRestartedInPlace", func() { s.restartedInPlace(before) }},
		{"DNSAndServicesAnswer", s.dnsAfterRestart},
		{"RoutesFollowNodeAddresses", s.routesFollowNodes},
		{"NothingLeakedOnNodes", s.noLeaks},
	})
}

func (s *netScenario) rebootPods(ctx context.Context) ([]api.Pod, error) {
	var l api.List[api.Pod]
	if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", rebootNS); err != nil {
		return nil, Retry(err)
	}
	return l.Items, nil
}

func (s *netScenario) rebootSetup() {
	s.nodesReady()
	nodes, err := s.scenario.nodes(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	s.nodes = nodes
	s.applyStdin(rebootManifest(nodes))
	s.kubectl("rollout", "status", "deployment/web", "-n", rebootNS, "--timeout=180s")
	s.within(2*time.Minute, "every pod Running and ready", func(ctx context.Context) (bool, string, error) {
		pods, err := s.rebootPods(ctx)
		if err != nil {
			return false, "", err
		}
		for _, p := range pods {
			if !running(p) || !podReady(p) {
				return false, describe(pods), nil
			}
		}
		return len(pods) == 2+len(nodes), describe(pods), nil
	})
}

// stuckPod: a pod whose ConfigMap volume does not exist stays
// ContainerCreating, and describe says why (the kubelet's FailedMount);
// once the ConfigMap exists it runs.
func (s *netScenario) stuckPod() {
	s.applyStdin(stuckManifest)
	want := `MountVolume.SetUp failed for volume "config" : configmap "settings" not found`
	s.within(time.Minute, "describe pod stuck showing FailedMount", func(ctx context.Context) (bool, string, error) {
		out, err := s.c.Kubectl(ctx, "describe", "pod", "stuck", "-n", rebootNS)
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.Contains(out, "FailedMount") && strings.Contains(out, want) && strings.Contains(out, "ContainerCreating"), out, nil
	})
	s.kubectl("create", "configmap", "settings", "-n", rebootNS, "--from-literal=greeting=hello")
	s.within(time.Minute, "pod stuck Running once its ConfigMap exists", func(ctx context.Context) (bool, string, error) {
		var p api.Pod
		if err := s.c.KubectlJSON(ctx, &p, "get", "pod", "stuck", "-n", rebootNS); err != nil {
			return false, "", Retry(err)
		}
		return running(p), describe([]api.Pod{p}), nil
	})
	s.kubectl("delete", "pod", "stuck", "-n", rebootNS, "--grace-period=1")
}

// restartCluster is make down && make up; it returns the restart counts
// of the pods before.
func (s *netScenario) restartCluster() map[string]int32 {
	pods, err := s.rebootPods(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	before := map[string]int32{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		var n int32
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
		}
		before[p.Name] = n
	}
	start := time.Now()
	if err := s.c.Restart(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("make down && make up: %.1fs to Ready nodes and cluster DNS rolled out", time.Since(start).Seconds())
	return before
}

// restartedInPlace: the same pods, none duplicated, each Running again
// with its restart count one higher (the kubelet restarts them after the
// reboot) and its last state the lost container (Unknown, 255).
func (s *netScenario) restartedInPlace(before map[string]int32) {
	s.within(3*time.Minute, "the same pods Running again, each restarted once", func(ctx context.Context) (bool, string, error) {
		pods, err := s.rebootPods(ctx)
		if err != nil {
			return false, "", err
		}
		if len(pods) != len(before) {
			return false, describe(pods), nil
		}
		for _, p := range pods {
			b, ok := before[p.Name]
			if !ok {
				return false, "a pod that was not there before: " + describe(pods), nil
			}
			if !running(p) || !podReady(p) {
				return false, describe(pods), nil
			}
			var n int32
			for _, cs := range p.Status.ContainerStatuses {
				n += cs.RestartCount
				if last := cs.LastTerminationState.Terminated; last == nil || last.Reason != "Unknown" || last.ExitCode != 255 {
					return false, fmt.Sprintf("%s/%s lastState %+v, want Terminated Unknown 255", p.Name, cs.Name, cs.LastTerminationState), nil
				}
			}
			if n != b+1 {
				return false, fmt.Sprintf("%s restarts %d, before the reboot %d", p.Name, n, b), nil
			}
		}
		return true, "", nil
	})
	s.kubectl("rollout", "status", "deployment/cluster-dns", "-n", "kube-system", "--timeout=60s")
}

// dnsAfterRestart: from a client pod on every node, the Service's name
// resolves through cluster DNS and its ClusterIP reaches a backend
// (busybox wget crashes with -T: timeout bounds it).
func (s *netScenario) dnsAfterRestart() {
	for _, n := range s.nodes {
		client := "client-" + n.Name
		full := "web." + rebootNS + ".svc.cluster.local"
		s.within(time.Minute, fmt.Sprintf("nslookup %s in %s", full, client), func(ctx context.Context) (bool, string, error) {
			var sv api.Service
			if err := s.c.KubectlJSON(ctx, &sv, "get", "service", "web", "-n", rebootNS); err != nil {
				return false, "", Retry(err)
			}
			out, err := s.c.Kubectl(ctx, "exec", "-n", rebootNS, client, "--", "nslookup", full)
			if err != nil {
				return false, "", Retry(err)
			}
			return strings.Contains(out, sv.Spec.ClusterIP), out, nil
		})
		s.within(time.Minute, "wget http://web/ from "+client, func(ctx context.Context) (bool, string, error) {
			out, err := s.c.Kubectl(ctx, "exec", "-n", rebootNS, client, "--", "timeout", "5", "wget", "-q", "-O", "-", "http://web/")
			if err != nil {
				return false, "", Retry(err)
			}
			return strings.Contains(out, "web-"), out, nil
		})
	}
}

// routesFollowNodes: every node routes each other node's podCIDR via that
// node's current InternalIP.
func (s *netScenario) routesFollowNodes() {
	nodes, err := s.scenario.nodes(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, from := range nodes {
		s.within(time.Minute, "pod routes on "+from.Name, func(ctx context.Context) (bool, string, error) {
			out, err := s.c.Exec(ctx, from.Name, "ip", "-4", "route")
			if err != nil {
				return false, "", Retry(err)
			}
			for _, to := range nodes {
				if to.Name == from.Name || to.Spec.PodCIDR == "" {
					continue
				}
				want := to.Spec.PodCIDR + " via " + internalIP(to)
				if !strings.Contains(out, want) {
					return false, fmt.Sprintf("no %q in\n%s", want, out), nil
				}
			}
			return true, "", nil
		})
	}
}

func internalIP(n api.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == api.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// noLeaks: on every node, exactly one network namespace and one veth per
// pod with a network of its own running there, one containerd sandbox per
// pod, and no CNI chains of pods that are gone: one hostPort chain
// (CNI-DN-) per running pod with hostPorts (the ingress controller add-on's
// on node-1), none else.
func (s *netScenario) noLeaks() {
	var all api.List[api.Pod]
	if err := s.c.KubectlJSON(s.ctx, &all, "get", "pods", "-A"); err != nil {
		s.t.Fatal(err)
	}
	for _, n := range s.nodes {
		podNet, pods, hostPorts := 0, 0, 0
		for _, p := range all.Items {
			if p.Spec.NodeName != n.Name || p.DeletionTimestamp != nil || p.Status.Phase != api.PodRunning {
				continue
			}
			pods++
			if !p.Spec.HostNetwork {
				podNet++
				if hasHostPort(p) {
					hostPorts++
				}
			}
		}
		s.within(time.Minute, "no leftovers on "+n.Name, func(ctx context.Context) (bool, string, error) {
			netns, err := s.c.Exec(ctx, n.Name, "ip", "netns", "list")
			if err != nil {
				return false, "", Retry(err)
			}
			// The pods' host-side veths are the bridge's ports (the node
			// container's own eth0 is a veth too).
			veths, err := s.c.Exec(ctx, n.Name, "ip", "-o", "link", "show", "master", "cni0")
			if err != nil {
				return false, "", Retry(err)
			}
			sandboxes, err := s.c.Exec(ctx, n.Name, "ctr", "-n", runtimeNamespace(ctx, s.c, n.Name), "containers", "ls", "-q",
				`labels."io.cri-containerd.kind"==sandbox`)
			if err != nil {
				return false, "", Retry(err)
			}
			nat, err := s.c.Exec(ctx, n.Name, "iptables-save", "-t", "nat")
			if err != nil {
				return false, "", Retry(err)
			}
			dn := strings.Count(nat, ":CNI-DN-")
			got := fmt.Sprintf("%d netns, %d veths, %d sandboxes, %d CNI-DN chains; want %d, %d, %d, %d",
				lines(netns), lines(veths), lines(sandboxes), dn, podNet, podNet, pods, hostPorts)
			return lines(netns) == podNet && lines(veths) == podNet && lines(sandboxes) == pods &&
				dn == hostPorts, got, nil
		})
	}
}

// hasHostPort says whether a container of p maps a hostPort.
func hasHostPort(p api.Pod) bool {
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				return true
			}
		}
	}
	return false
}

// lines counts the non-empty lines of a command's output.
func lines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}
