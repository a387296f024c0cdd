package e2e

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// The reduced matrix of Kubernetes' netpol e2e suite
// (test/e2e/network/netpol): namespaces x, y, z, each with pods a, b, c
// serving HTTP on 80 and 81, spread over both nodes, so every policy is
// enforced on each node for pods on it and on the other one.
var (
	netpolNamespaces = []string{"e2e-netpol-x", "e2e-netpol-y", "e2e-netpol-z"}
	netpolPods       = []string{"a", "b", "c"}
)

func netpolManifest(nodes []string) string {
	var b strings.Builder
	i := 0
	for _, ns := range netpolNamespaces {
		short := ns[len(ns)-1:]
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels:\n    ns: \"%s\"\n---\n", ns, short)
		for _, p := range netpolPods {
			fmt.Fprintf(&b, `apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels:
    pod: %s
spec:
  nodeName: %s
  terminationGracePeriodSeconds: 1
  containers:
    - name: srv
      image: minik8s/busybox:latest
      imagePullPolicy: IfNotPresent
      command: ["sh", "-c", "mkdir -p /www && echo %s/%s >/www/index.html && httpd -p 80 -h /www && httpd -p 81 -h /www && exec sleep 86400"]
      ports:
        - name: serve-80-tcp
          containerPort: 80
        - name: serve-81-tcp
          containerPort: 81
---
`, p, ns, p, nodes[i%len(nodes)], short, p)
			i++
		}
	}
	return b.String()
}

// netpolCell is one probe of the matrix: "x/a" to "y/b" on a port.
type netpolCell struct{ from, to string }

// TestNetworkPolicy checks the matrix after each policy: default-deny
// ingress, allow from a namespace, allow from a pod in a namespace, and
// egress deny with a port allowed, every cell as Kubernetes specifies.
func TestNetworkPolicy(t *testing.T) {
	c := requireCluster(t)
	s := &netScenario{scenario: &scenario{c: c}}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	s.t, s.ctx = t, ctx
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, ns := range netpolNamespaces {
			if _, err := c.Kubectl(ctx, "delete", "namespace", ns, "--wait=false"); err != nil {
				t.Logf("delete namespace %s: %v", ns, err)
			}
		}
	})
	s.nodesReady()
	nodes, err := s.scenario.nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	s.applyStdin(netpolManifest(names))

	// ips maps "x/a" to the pod's IP once every pod runs.
	ips := map[string]string{}
	where := map[string]string{}
	s.within(3*time.Minute, "9 pods Running", func(ctx context.Context) (bool, string, error) {
		var parts []string
		for _, ns := range netpolNamespaces {
			var l api.List[api.Pod]
			if err := c.KubectlJSON(ctx, &l, "get", "pods", "-n", ns); err != nil {
				return false, "", Retry(err)
			}
			for _, p := range l.Items {
				if running(p) {
					key := ns[len(ns)-1:] + "/" + p.Name
					ips[key], where[key] = p.Status.PodIP, p.Spec.NodeName
				}
			}
			parts = append(parts, describe(l.Items))
		}
		return len(ips) == 9, strings.Join(parts, "; "), nil
	})
	t.Logf("pods: %v", where)
	var pods []string
	for _, ns := range []string{"x", "y", "z"} {
		for _, p := range netpolPods {
			pods = append(pods, ns+"/"+p)
		}
	}
	nsOf := func(pod string) string { return pod[:1] }

	// probe connects from every pod to every other on port, one exec per
	// source pod, and returns the cells that answered.
	var slow []string
	probe := func(ctx context.Context, port int) (map[netpolCell]bool, error) {
		slow = nil
		got := map[netpolCell]bool{}
		for _, from := range pods {
			var script strings.Builder
			for _, to := range pods {
				if to == from {
					continue
				}
				fmt.Fprintf(&script, "s=$(date +%%s); if timeout 3 wget -q -O - http://%s:%d/ >/dev/null 2>&1; then echo 'ok %s'; else echo \"no %s $(( $(date +%%s) - s ))\"; fi; ", ips[to], port, to, to)
			}
			out, err := c.Kubectl(ctx, "exec", "-n", "e2e-netpol-"+nsOf(from), from[2:], "--", "sh", "-c", script.String())
			if err != nil {
				return nil, err
			}
			for _, line := range strings.Split(out, "\n") {
				if to, ok := strings.CutPrefix(strings.TrimSpace(line), "ok "); ok {
					got[netpolCell{from, to}] = true
				}
				// A denial should be refused at once (REJECT), not time out.
				if f := strings.Fields(line); len(f) == 3 && f[0] == "no" && f[2] >= "2" {
					slow = append(slow, from+"->"+f[1]+":"+f[2]+"s")
				}
			}
		}
		return got, nil
	}
	// expect waits until the matrix on port is want's.
	expect := func(step string, port int, want func(from, to string) bool) {
		t.Helper()
		start := time.Now()
		var last string
		for {
			got, err := probe(ctx, port)
			if err == nil {
				var wrong []string
				for _, from := range pods {
					for _, to := range pods {
						if from != to && got[netpolCell{from, to}] != want(from, to) {
							wrong = append(wrong, fmt.Sprintf("%s(%s) -> %s(%s): got %v", from, where[from], to, where[to], got[netpolCell{from, to}]))
						}
					}
				}
				if len(wrong) == 0 {
					t.Logf("%s, port %d: all 72 cells as expected after %.1fs; denials not refused within 2s: %v", step, port, time.Since(start).Seconds(), slow)
					return
				}
				last = strings.Join(wrong, "\n")
			} else {
				last = err.Error()
			}
			if time.Since(start) > 90*time.Second || ctx.Err() != nil {
				t.Fatalf("%s, port %d, wrong cells:\n%s", step, port, last)
			}
			time.Sleep(2 * time.Second)
		}
	}
	apply := func(manifest string) {
		t.Helper()
		if _, err := c.RunInput(ctx, []byte(manifest), c.Root+"/bin/kubectl-lite", "--kubeconfig", c.Kubeconfig, "apply", "-f", "-"); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(ns string, names ...string) {
		t.Helper()
		if _, err := c.Kubectl(ctx, append([]string{"delete", "networkpolicy", "-n", ns}, names...)...); err != nil {
			t.Fatal(err)
		}
	}
	everyone := func(from, to string) bool { return true }

	expect("no policy", 80, everyone)

	apply(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: deny-ingress
  namespace: e2e-netpol-x
spec:
  podSelector: {}
  policyTypes: ["Ingress"]
`)
	expect("default-deny-ingress in x", 80, func(from, to string) bool { return nsOf(to) != "x" })

	apply(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-from-y
  namespace: e2e-netpol-x
spec:
  podSelector: {}
  ingress:
    - from:
        - namespaceSelector:
            matchLabels:
              ns: "y"
`)
	expect("allow from namespace y to x", 80, func(from, to string) bool { return nsOf(to) != "x" || nsOf(from) == "y" })

	apply(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-from-z-b-on-81
  namespace: e2e-netpol-x
spec:
  podSelector:
    matchLabels:
      pod: a
  ingress:
    - from:
        - namespaceSelector:
            matchLabels:
              ns: "z"
          podSelector:
            matchLabels:
              pod: b
      ports:
        - port: serve-81-tcp
`)
	expect("plus z/b to x/a on the named port serve-81-tcp", 81, func(from, to string) bool {
		return nsOf(to) != "x" || nsOf(from) == "y" || from == "z/b" && to == "x/a"
	})
	expect("z/b to x/a not on 80", 80, func(from, to string) bool { return nsOf(to) != "x" || nsOf(from) == "y" })
	remove("e2e-netpol-x", "deny-ingress", "allow-from-y", "allow-from-z-b-on-81")
	expect("policies deleted", 80, everyone)

	apply(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: egress-to-z-on-80
  namespace: e2e-netpol-y
spec:
  podSelector: {}
  policyTypes: ["Egress"]
  egress:
    - to:
        - namespaceSelector:
            matchLabels:
              ns: "z"
      ports:
        - protocol: TCP
          port: 80
`)
	expect("egress from y only to z on 80", 80, func(from, to string) bool { return nsOf(from) != "y" || nsOf(to) == "z" })
	expect("egress from y nowhere on 81", 81, func(from, to string) bool { return nsOf(from) != "y" })
	remove("e2e-netpol-y", "egress-to-z-on-80")
	expect("egress policy deleted", 81, everyone)

	// Egress denied but DNS: only to the cluster DNS pods (host network
	// here, so their address is their node's, reached through the DNS
	// Service 10.96.0.10 on either node).
	apply(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: egress-dns-only
  namespace: e2e-netpol-y
spec:
  podSelector: {}
  policyTypes: ["Egress"]
  egress:
    - to:
        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: kube-system
          podSelector:
            matchLabels:
              k8s-app: kube-dns
      ports:
        - protocol: UDP
          port: 53
        - protocol: TCP
          port: 53
`)
	expect("egress from y denied but DNS", 80, func(from, to string) bool { return nsOf(from) != "y" })
	var kube api.Service
	if err := c.KubectlJSON(ctx, &kube, "get", "service", "kubernetes", "-n", "default"); err != nil {
		t.Fatal(err)
	}
	answer := regexp.MustCompile(`Name:\s+kubernetes\.default\.svc\.cluster\.local\s+Address:\s*` + regexp.QuoteMeta(kube.Spec.ClusterIP) + `\s`)
	for _, p := range netpolPods {
		name := "kubernetes.default.svc.cluster.local"
		s.within(30*time.Second, fmt.Sprintf("nslookup %s from y/%s on %s", name, p, where["y/"+p]), func(ctx context.Context) (bool, string, error) {
			out, err := c.Kubectl(ctx, "exec", "-n", "e2e-netpol-y", p, "--", "nslookup", name)
			if err != nil {
				return false, err.Error(), nil
			}
			return answer.MatchString(out + "\n"), out, nil
		})
	}
	remove("e2e-netpol-y", "egress-dns-only")
	expect("DNS policy deleted", 80, everyone)
}
