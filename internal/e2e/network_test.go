package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// netNS is the namespace of the networking tests, apart from the
// lifecycle scenario's so that neither depends on the other's order.
const netNS = "e2e-net"

// netManifest is the backend (3 replicas of the page naming its pod)
// behind a ClusterIP Service, a headless Service and a ClientIP-affinity
// Service on the same pods.
var netManifest = webManifest(netNS, 3) + `---
apiVersion: v1
kind: Service
metadata:
  name: web-headless
  namespace: ` + netNS + `
spec:
  clusterIP: None
  selector:
    app: web
  ports:
    - name: http
      port: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: web-sticky
  namespace: ` + netNS + `
spec:
  sessionAffinity: ClientIP
  selector:
    app: web
  ports:
    - name: http
      port: 80
      targetPort: http
`

// soloManifest is one backend pod pinned to node behind its own Service,
// to compare the same server reached by ClusterIP and by pod IP.
func soloManifest(node string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: ` + netNS + `
  labels:
    app: solo
spec:
  nodeName: ` + node + `
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: minik8s/busybox:latest
      imagePullPolicy: IfNotPresent
      ports:
        - name: http
          containerPort: 8080
      readinessProbe:
        httpGet:
          path: /
          port: http
        periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: solo
  namespace: ` + netNS + `
spec:
  selector:
    app: solo
  ports:
    - port: 80
      targetPort: http
`
}

// netScenario is the state the networking steps share: the lifecycle
// scenario's helpers plus the client pods, one per node.
type netScenario struct {
	*scenario
	nodes   []api.Node
	clients map[string]api.Pod // by node name
}

// TestNetworkServices is the networking scenario. Setup failing
// skips the rest; every other step restores three ready backends first,
// so one failed step does not fail the next.
func TestNetworkServices(t *testing.T) {
	c := requireCluster(t)
	s := &netScenario{scenario: &scenario{c: c}, clients: map[string]api.Pod{}}
	steps := []struct {
		name string
		fn   func(*netScenario)
	}{
		{"Setup", (*netScenario).setup},
		{"PodToPodAcrossNodes", (*netScenario).podToPod},
		{"ClusterIPReachesAllBackends", (*netScenario).clusterIP},
		{"DNSNameReachesAllBackends", (*netScenario).dnsName},
		{"HeadlessServiceResolvesToPods", (*netScenario).headless},
		{"KubernetesServiceReachesAPIServer", (*netScenario).kubernetesService},
		{"SessionAffinityClientIP", (*netScenario).sticky},
		{"ThroughputClusterIPVsPodIP", (*netScenario).throughput},
		{"DeletedBackendGetsNoTraffic", (*netScenario).deletedBackend},
		{"ScaledToZeroRefuses", (*netScenario).scaledToZero},
		{"NodePortOnEveryNode", (*netScenario).nodePort},
		{"DeletedServiceLeavesNoRules", (*netScenario).deletedService},
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(ctx, "delete", "namespace", netNS); err != nil {
			t.Logf("delete namespace %s: %v", netNS, err)
		}
	})
	for i, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			s.t, s.ctx = t, ctx
			defer func() {
				if t.Failed() {
					s.diagnose()
				}
			}()
			if i > 0 {
				s.backends(3)
			}
			st.fn(s)
		})
		if !ok && i == 0 {
			for _, rest := range steps[1:] {
				t.Run(rest.name, func(t *testing.T) { t.Skip("not run: setup failed") })
			}
			return
		}
	}
}

func (s *netScenario) setup() {
	s.nodesReady()
	nodes, err := s.scenario.nodes(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	s.nodes = nodes
	manifest := netManifest
	for _, n := range nodes {
		manifest += "---\n" + clientManifest(netNS, n.Name)
	}
	s.applyStdin(manifest)
	s.kubectl("rollout", "status", "deployment/web", "-n", netNS, "--timeout=180s")
	s.within(2*time.Minute, "client pods Running on every node", func(ctx context.Context) (bool, string, error) {
		var l api.List[api.Pod]
		if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", netNS, "-l", "app=client"); err != nil {
			return false, "", Retry(err)
		}
		for _, p := range l.Items {
			if running(p) {
				s.clients[p.Spec.NodeName] = p
			}
		}
		return len(s.clients) == len(nodes), describe(l.Items), nil
	})
	s.backends(3)
}

// applyStdin applies a manifest given on kubectl-lite's standard input.
//
// A manifest that creates its namespace may meet ServiceAccount admission
// before the serviceaccount controller has given the namespace its
// default account (kube's e2e framework waits for it too): the apply is
// repeated, for up to a minute, while that is the only refusal.
func (s *netScenario) applyStdin(manifest string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	err := Poll(ctx, time.Second, "apply", func(ctx context.Context) (bool, string, error) {
		_, err := s.c.RunInput(ctx, []byte(manifest), filepath.Join(s.c.Root, "bin", "kubectl-lite"),
			"--kubeconfig", s.c.Kubeconfig, "apply", "-f", "-")
		if err != nil && strings.Contains(err.Error(), "error looking up service account") &&
			strings.Contains(err.Error(), `serviceaccount "default" not found`) {
			return false, "", Retry(err)
		}
		return err == nil, "", err
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// webPods are the backend pods.
func (s *netScenario) webPods(ctx context.Context) ([]api.Pod, error) {
	var l api.List[api.Pod]
	if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", netNS, "-l", "app=web"); err != nil {
		return nil, Retry(err)
	}
	return l.Items, nil
}

// readyEndpoints are the addresses of the ready endpoints of Service
// ns/name.
func (s *netScenario) readyEndpoints(ctx context.Context, ns, name string) ([]string, error) {
	var l api.List[api.EndpointSlice]
	if err := s.c.KubectlJSON(ctx, &l, "get", "endpointslices", "-n", ns, "-l", api.LabelServiceName+"="+name); err != nil {
		return nil, Retry(err)
	}
	var out []string
	for _, sl := range l.Items {
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				out = append(out, e.Addresses...)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// backends scales web to n and waits until exactly n pods exist, all
// Running and ready, and are the Service's ready endpoints.
func (s *netScenario) backends(n int) []api.Pod {
	s.t.Helper()
	s.kubectl("scale", "deployment/web", "-n", netNS, fmt.Sprintf("--replicas=%d", n))
	var got []api.Pod
	s.within(3*time.Minute, fmt.Sprintf("%d ready backends as the Service's endpoints", n), func(ctx context.Context) (bool, string, error) {
		pods, err := s.webPods(ctx)
		if err != nil {
			return false, "", err
		}
		var ips []string
		for _, p := range pods {
			if p.DeletionTimestamp != nil || !running(p) || !podReady(p) {
				return false, describe(pods), nil
			}
			ips = append(ips, p.Status.PodIP)
		}
		if len(pods) != n {
			return false, describe(pods), nil
		}
		eps, err := s.readyEndpoints(ctx, netNS, "web")
		if err != nil {
			return false, "", err
		}
		sort.Strings(ips)
		if !slices.Equal(ips, eps) {
			return false, fmt.Sprintf("endpoints %v, pods %s", eps, describe(pods)), nil
		}
		got = pods
		return true, "", nil
	})
	return got
}

func podReady(p api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// fetch is the outcome of requests made from a client pod: the pod names
// the pages named, in order, and the failures' messages.
type fetch struct {
	names  []string
	errors []string
}

var h1 = regexp.MustCompile(`<h1>([^<]*)</h1>`)

// fetchN GETs url n times, one new connection each, from the client pod on
// node, in one exec. Debian's static busybox wget crashes with -T, so
// timeout(1) bounds each request instead.
func (s *netScenario) fetchN(ctx context.Context, node, url string, n int) (fetch, error) {
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); timeout 5 wget -q -O - %s 2>&1 || echo "FAIL $?"; done`, n, url)
	out, err := s.c.Kubectl(ctx, "exec", "-n", netNS, s.clients[node].Name, "--", "sh", "-c", script)
	if err != nil {
		return fetch{}, err
	}
	var f fetch
	for _, line := range strings.Split(out, "\n") {
		if m := h1.FindStringSubmatch(line); m != nil {
			f.names = append(f.names, m[1])
		} else if strings.HasPrefix(line, "wget:") || strings.HasPrefix(line, "FAIL") {
			f.errors = append(f.errors, line)
		}
	}
	return f, nil
}

func podNames(pods []api.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// reachesAll fetches url from every client until each backend answered,
// failing on an error or a page from anything but a backend.
func (s *netScenario) reachesAll(url string, backends []api.Pod) {
	s.t.Helper()
	want := podNames(backends)
	for node := range s.clients {
		seen := map[string]int{}
		s.within(time.Minute, fmt.Sprintf("all %d backends answering %s from %s", len(want), url, node), func(ctx context.Context) (bool, string, error) {
			f, err := s.fetchN(ctx, node, url, 12)
			if err != nil {
				return false, "", Retry(err)
			}
			// The proxies follow an endpoint change within a second of
			// the EndpointSlice: a failure is retried, a stray page is not.
			if len(f.errors) > 0 {
				return false, "", Retry(fmt.Errorf("GET %s from %s: %v", url, node, f.errors))
			}
			for _, n := range f.names {
				if !slices.Contains(want, n) {
					return false, "", fmt.Errorf("GET %s from %s answered by %q, not a backend of %v", url, node, n, want)
				}
				seen[n]++
			}
			return len(seen) == len(want), fmt.Sprintf("answers %v", seen), nil
		})
		s.t.Logf("%s from %s: answers per backend %v", url, node, seen)
	}
}

func (s *netScenario) service(ctx context.Context, name string) (api.Service, error) {
	var svc api.Service
	err := s.c.KubectlJSON(ctx, &svc, "get", "service", name, "-n", netNS)
	return svc, err
}

// podToPod fetches every backend's page by pod IP from the client on
// another node (no NAT, no Service: the host-gateway routes).
func (s *netScenario) podToPod() {
	pods := s.backends(3)
	for _, p := range pods {
		for node := range s.clients {
			if node == p.Spec.NodeName {
				continue
			}
			url := "http://" + p.Status.PodIP + ":8080/"
			f, err := s.fetchN(s.ctx, node, url, 1)
			if err != nil {
				s.t.Fatal(err)
			}
			if len(f.names) != 1 || f.names[0] != p.Name {
				s.t.Errorf("GET %s (pod %s on %s) from %s: pages of %v, errors %v", url, p.Name, p.Spec.NodeName, node, f.names, f.errors)
				continue
			}
			// No NAT between pods: the backend's httpd logs the request
			// ("IP:PORT: url:/") from the client pod's own address.
			client := s.clients[node]
			s.within(15*time.Second, fmt.Sprintf("pod %s logging a request from client pod IP %s (not NATed)", p.Name, client.Status.PodIP),
				func(ctx context.Context) (bool, string, error) {
					logs, err := s.c.Kubectl(ctx, "logs", "-n", netNS, p.Name, "--tail", "200")
					if err != nil {
						return false, "", Retry(err)
					}
					// httpd names an IPv4 peer "IP:PORT" or, on a dual-stack
					// socket, "[::ffff:IP]:PORT".
					seen := strings.Contains("\n"+logs, "\n"+client.Status.PodIP+":") ||
						strings.Contains(logs, "[::ffff:"+client.Status.PodIP+"]:")
					return seen, "log:\n" + logs, nil
				})
			s.t.Logf("%s (%s) on %s reached pod %s on %s at %s with its own address", client.Name, client.Status.PodIP, node, p.Name, p.Spec.NodeName, p.Status.PodIP)
		}
	}
}

func (s *netScenario) clusterIP() {
	pods := s.backends(3)
	svc, err := s.service(s.ctx, "web")
	if err != nil {
		s.t.Fatal(err)
	}
	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/12")
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || !serviceRange.Contains(ip) {
		s.t.Fatalf("Service web has clusterIP %q, want one in %s", svc.Spec.ClusterIP, serviceRange)
	}
	s.reachesAll("http://"+svc.Spec.ClusterIP+"/", pods)
}

// dnsName resolves the Service through the kube-dns Service the kubelet
// puts in the pods' resolv.conf, by its short name (the search path) and
// its full name.
func (s *netScenario) dnsName() {
	pods := s.backends(3)
	svc, err := s.service(s.ctx, "web")
	if err != nil {
		s.t.Fatal(err)
	}
	// The cluster-dns pods restart with their nodes (the lifecycle test
	// stops and restarts them): wait until they serve again.
	s.kubectl("rollout", "status", "deployment/cluster-dns", "-n", "kube-system", "--timeout=120s")
	s.within(time.Minute, "ready endpoints of kube-system/kube-dns", func(ctx context.Context) (bool, string, error) {
		eps, err := s.readyEndpoints(ctx, "kube-system", "kube-dns")
		return len(eps) > 0, fmt.Sprint(eps), err
	})
	for node, c := range s.clients {
		conf, err := s.c.Kubectl(s.ctx, "exec", "-n", netNS, c.Name, "--", "cat", "/etc/resolv.conf")
		if err != nil {
			s.t.Fatal(err)
		}
		if !strings.Contains(conf, "nameserver 10.96.0.10") || !strings.Contains(conf, "search "+netNS+".svc.cluster.local svc.cluster.local cluster.local") {
			s.t.Errorf("resolv.conf of %s on %s:\n%s\nwant nameserver 10.96.0.10 and search %s.svc.cluster.local svc.cluster.local cluster.local", c.Name, node, conf, netNS)
		}
		full := "web." + netNS + ".svc.cluster.local"
		// The proxies follow the kube-dns endpoints within a second.
		s.within(20*time.Second, fmt.Sprintf("nslookup %s in %s answering %s", full, c.Name, svc.Spec.ClusterIP), func(ctx context.Context) (bool, string, error) {
			out, err := s.c.Kubectl(ctx, "exec", "-n", netNS, c.Name, "--", "nslookup", full)
			if err != nil {
				return false, "", Retry(err)
			}
			return strings.Contains(out, svc.Spec.ClusterIP), out, nil
		})
	}
	s.reachesAll("http://web/", pods)
	s.reachesAll("http://web."+netNS+".svc.cluster.local/", pods)
}

// throughput logs requests/s of new connections to one backend through
// its ClusterIP and by its pod IP, from the client on the other node,
// alternating rounds in one run (each request is a busybox wget process,
// which dominates; the proxy's own figure is BenchmarkClusterIPVsPodIP).
// Logged, not asserted.
func (s *netScenario) throughput() {
	if len(s.nodes) < 2 {
		s.t.Skip("needs two nodes")
	}
	server, from := s.nodes[0].Name, s.nodes[1].Name
	s.applyStdin(soloManifest(server))
	var podIP string
	s.within(2*time.Minute, "pod solo ready as the endpoint of Service solo", func(ctx context.Context) (bool, string, error) {
		var p api.Pod
		if err := s.c.KubectlJSON(ctx, &p, "get", "pod", "solo", "-n", netNS); err != nil {
			return false, "", Retry(err)
		}
		eps, err := s.readyEndpoints(ctx, netNS, "solo")
		if err != nil {
			return false, "", err
		}
		podIP = p.Status.PodIP
		return podReady(p) && slices.Equal(eps, []string{podIP}), fmt.Sprintf("pod %s, endpoints %v", describe([]api.Pod{p}), eps), nil
	})
	svc, err := s.service(s.ctx, "solo")
	if err != nil {
		s.t.Fatal(err)
	}
	const rounds, n = 6, 50
	var direct, viaSvc time.Duration
	for range rounds {
		for _, m := range []struct {
			url string
			sum *time.Duration
		}{{"http://" + podIP + ":8080/", &direct}, {"http://" + svc.Spec.ClusterIP + "/", &viaSvc}} {
			start := time.Now()
			f, err := s.fetchN(s.ctx, from, m.url, n)
			*m.sum += time.Since(start)
			if err != nil {
				s.t.Fatal(err)
			}
			if len(f.errors) > 0 || len(f.names) != n {
				s.t.Fatalf("GET %s ×%d: %d pages, errors %v", m.url, n, len(f.names), f.errors)
			}
		}
	}
	total := float64(rounds * n)
	s.t.Logf("from %s to pod solo on %s, %d sequential wget in %d rounds each: pod IP %.0f req/s, ClusterIP %.0f req/s (ClusterIP/pod IP %.2f)",
		s.clients[from].Name, server, rounds*n, rounds, total/direct.Seconds(), total/viaSvc.Seconds(), direct.Seconds()/viaSvc.Seconds())
	s.kubectl("delete", "pod", "solo", "-n", netNS, "--wait=false")
	s.kubectl("delete", "service", "solo", "-n", netNS)
}

// headless resolves a Service with clusterIP: None to its ready pods' IPs.
func (s *netScenario) headless() {
	pods := s.backends(3)
	name := "web-headless." + netNS + ".svc.cluster.local"
	var want []string
	for _, p := range pods {
		want = append(want, p.Status.PodIP)
	}
	s.within(30*time.Second, "nslookup "+name+" answering every pod IP", func(ctx context.Context) (bool, string, error) {
		out, err := s.c.Kubectl(ctx, "exec", "-n", netNS, s.clients[s.nodes[0].Name].Name, "--", "nslookup", name)
		if err != nil {
			return false, "", Retry(err)
		}
		for _, ip := range want {
			if !strings.Contains(out, "Address: "+ip) {
				return false, fmt.Sprintf("nslookup: %q, want %v", out, want), nil
			}
		}
		return true, "", nil
	})
}

// kubernetesService connects from every client to the apiserver through
// default/kubernetes, by ClusterIP and by the name in-cluster clients use.
func (s *netScenario) kubernetesService() {
	for node, c := range s.clients {
		for _, host := range []string{"10.96.0.1", "kubernetes.default"} {
			// busybox nc exits 0 once connected; stdin at EOF closes it.
			out, err := s.c.Kubectl(s.ctx, "exec", "-n", netNS, c.Name, "--", "sh", "-c", "timeout 5 nc "+host+" 443 </dev/null")
			if err != nil {
				s.t.Errorf("TCP connect to %s:443 from %s on %s: %q %v", host, c.Name, node, out, err)
			}
		}
	}
}

// sticky expects a sessionAffinity: ClientIP Service to send every request
// of one client to the same backend, while the plain Service spreads them.
func (s *netScenario) sticky() {
	pods := s.backends(3)
	want := podNames(pods)
	for node := range s.clients {
		f, err := s.fetchN(s.ctx, node, "http://web-sticky/", 15)
		if err != nil {
			s.t.Fatal(err)
		}
		if len(f.errors) > 0 || len(f.names) != 15 {
			s.t.Fatalf("GET http://web-sticky/ ×15 from %s: pages %v, errors %v", node, f.names, f.errors)
		}
		for _, n := range f.names {
			if n != f.names[0] || !slices.Contains(want, n) {
				s.t.Errorf("GET http://web-sticky/ from %s answered by %v; want one backend of %v every time", node, f.names, want)
				break
			}
		}
	}
}

// deletedBackend deletes one backend and expects the Service to stop
// sending it traffic at once: a few requests may still reach it while the
// deletion reaches the proxies, then none, and every request succeeds.
func (s *netScenario) deletedBackend() {
	pods := s.backends(3)
	svc, err := s.service(s.ctx, "web")
	if err != nil {
		s.t.Fatal(err)
	}
	url := "http://" + svc.Spec.ClusterIP + "/"
	victim := pods[0]
	start := time.Now()
	s.kubectl("delete", "pod", victim.Name, "-n", netNS, "--wait=false")
	s.within(time.Minute, "endpoint of "+victim.Name+" removed", func(ctx context.Context) (bool, string, error) {
		eps, err := s.readyEndpoints(ctx, netNS, "web")
		if err != nil {
			return false, "", err
		}
		return !slices.Contains(eps, victim.Status.PodIP), fmt.Sprintf("endpoints %v", eps), nil
	})
	// The proxies follow the EndpointSlice within a second.
	time.Sleep(time.Second)
	for node := range s.clients {
		f, err := s.fetchN(s.ctx, node, url, 30)
		if err != nil {
			s.t.Fatal(err)
		}
		if slices.Contains(f.names, victim.Name) || len(f.errors) > 0 {
			s.t.Errorf("from %s, %.1fs after deleting %s: answers %v, errors %v; want none from it and no error",
				node, time.Since(start).Seconds(), victim.Name, f.names, f.errors)
		}
	}
}

// scaledToZero expects a Service without endpoints to refuse connections
// (the proxy's REJECT rule), not to let them hang. As with kube-proxy, the
// refusal is an ICMP port unreachable, which the kernel rate-limits per
// client (net.ipv4.icmp_ratelimit, 1 s): back-to-back connections may see
// their first SYN go unanswered and the retransmitted one refused.
func (s *netScenario) scaledToZero() {
	svc, err := s.service(s.ctx, "web")
	if err != nil {
		s.t.Fatal(err)
	}
	s.backends(0)
	time.Sleep(time.Second)
	for node := range s.clients {
		for _, url := range []string{"http://" + svc.Spec.ClusterIP + "/", "http://web/"} {
			start := time.Now()
			f, err := s.fetchN(s.ctx, node, url, 1)
			if err != nil {
				s.t.Fatal(err)
			}
			s.t.Logf("GET %s from %s with no endpoints: %v in %.2fs (with the exec)", url, node, f.errors, time.Since(start).Seconds())
			// A hang ends with timeout(1)'s "FAIL 143" and no wget message.
			if len(f.names) > 0 || len(f.errors) == 0 || !strings.Contains(f.errors[0], "Connection refused") {
				s.t.Errorf("GET %s from %s with no endpoints: pages %v, errors %v; want wget's Connection refused", url, node, f.names, f.errors)
			}
		}
	}
	pods := s.backends(3)
	s.reachesAll("http://web/", pods)
}

// nodeIPs are the nodes' InternalIPs by node name.
func (s *netScenario) nodeIPs() map[string]string {
	out := map[string]string{}
	for _, n := range s.nodes {
		for _, a := range n.Status.Addresses {
			if a.Type == api.NodeInternalIP {
				out[n.Name] = a.Address
			}
		}
	}
	return out
}

const nodePortManifest = `apiVersion: v1
kind: Service
metadata:
  name: web-np
  namespace: ` + netNS + `
spec:
  type: NodePort
  selector:
    app: web
  ports:
    - name: http
      port: 8081
      targetPort: http
`

// createNodePort creates the NodePort Service web-np and returns it once
// its endpoints are the backends.
func (s *netScenario) createNodePort(pods []api.Pod) api.Service {
	s.t.Helper()
	s.applyStdin(nodePortManifest)
	svc, err := s.service(s.ctx, "web-np")
	if err != nil {
		s.t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort < 30000 || svc.Spec.Ports[0].NodePort > 32767 {
		s.t.Fatalf("Service web-np ports %+v; want a nodePort in 30000-32767", svc.Spec.Ports)
	}
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	sort.Strings(ips)
	s.within(time.Minute, "web-np endpoints", func(ctx context.Context) (bool, string, error) {
		eps, err := s.readyEndpoints(ctx, netNS, "web-np")
		if err != nil {
			return false, "", err
		}
		return slices.Equal(eps, ips), fmt.Sprintf("endpoints %v, want %v", eps, ips), nil
	})
	return svc
}

// nodePort fetches the NodePort on every node's IP from every node (the
// node itself included) until each backend answered, and from the host.
func (s *netScenario) nodePort() {
	pods := s.backends(3)
	svc := s.createNodePort(pods)
	port := strconv.Itoa(int(svc.Spec.Ports[0].NodePort))
	want := podNames(pods)
	for target, ip := range s.nodeIPs() {
		for _, from := range s.nodes {
			seen := map[string]int{}
			url := "http://" + net.JoinHostPort(ip, port) + "/"
			s.within(time.Minute, fmt.Sprintf("NodePort of %s (%s) answering from %s by every backend", target, url, from.Name), func(ctx context.Context) (bool, string, error) {
				for range 6 {
					page, err := s.c.Exec(ctx, from.Name, "timeout", "5", "busybox", "wget", "-q", "-O", "-", url)
					if err != nil {
						return false, "", Retry(fmt.Errorf("GET %s from node %s: %w", url, from.Name, err))
					}
					m := h1.FindStringSubmatch(page)
					if m == nil || !slices.Contains(want, m[1]) {
						return false, "", fmt.Errorf("GET %s from node %s: %q, not a page of a backend %v", url, from.Name, page, want)
					}
					seen[m[1]]++
				}
				return len(seen) == len(want), fmt.Sprintf("answers %v", seen), nil
			})
		}
	}
}

// proxyRules are a node's iptables lines (both tables) that belong to the
// service proxy.
func (s *netScenario) proxyRules(ctx context.Context, node string) ([]string, error) {
	out, err := s.c.Exec(ctx, node, "iptables-save")
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "KUBE-") {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// deletedService creates the NodePort Service, checks its rules are on
// every node, deletes it and expects every line naming it, its ClusterIP,
// its NodePort or one of its chains to go.
func (s *netScenario) deletedService() {
	if mode := os.Getenv("MINIK8S_PROXY_MODE"); mode == "nftables" {
		// The cluster was brought up with kube-proxy in nftables mode: no
		// iptables chains to read (the mode's removals are checked in
		// network namespaces by kubelet/proxy's TestProxyModeSwitch).
		s.t.Skip("MINIK8S_PROXY_MODE=nftables: this step reads the iptables mode's chains")
	}
	pods := s.backends(3)
	svc := s.createNodePort(pods)
	name := netNS + "/web-np"
	nodePort := fmt.Sprintf("--dport %d", svc.Spec.Ports[0].NodePort)
	chainDecl := regexp.MustCompile(`^:(KUBE-(?:SVC|SEP)-[A-Z0-9]+) `)
	jumpTo := regexp.MustCompile(`-j (KUBE-(?:SVC|SEP)-[A-Z0-9]+)`)
	// chains are the per-service chains the rules naming the Service
	// jump to: its service chain and its endpoint chains.
	chains := func(lines []string) map[string]bool {
		out := map[string]bool{}
		for _, l := range lines {
			if m := jumpTo.FindStringSubmatch(l); m != nil && strings.Contains(l, `"`+name) {
				out[m[1]] = true
			}
		}
		return out
	}
	before := map[string]map[string]bool{}
	for _, n := range s.nodes {
		s.within(30*time.Second, "rules of "+name+" on "+n.Name, func(ctx context.Context) (bool, string, error) {
			lines, err := s.proxyRules(ctx, n.Name)
			if err != nil {
				return false, "", Retry(err)
			}
			// One service chain and one endpoint chain per backend.
			before[n.Name] = chains(lines)
			return len(before[n.Name]) == 1+len(pods), fmt.Sprintf("chains %v", before[n.Name]), nil
		})
	}
	s.kubectl("delete", "service", "web-np", "-n", netNS)
	start := time.Now()
	for _, n := range s.nodes {
		s.within(30*time.Second, "no rules of "+name+" left on "+n.Name, func(ctx context.Context) (bool, string, error) {
			lines, err := s.proxyRules(ctx, n.Name)
			if err != nil {
				return false, "", Retry(err)
			}
			var left []string
			for _, l := range lines {
				m := chainDecl.FindStringSubmatch(l)
				if strings.Contains(l, `"`+name) || strings.Contains(l, svc.Spec.ClusterIP+"/32") || strings.Contains(l, nodePort) ||
					(m != nil && before[n.Name][m[1]]) {
					left = append(left, l)
				}
			}
			return len(left) == 0, fmt.Sprintf("left: %q", left), nil
		})
	}
	s.t.Logf("every rule of %s gone from %d nodes %.1fs after its deletion", name, len(s.nodes), time.Since(start).Seconds())
	// The other Service's rules stay.
	for _, n := range s.nodes {
		lines, err := s.proxyRules(s.ctx, n.Name)
		if err != nil {
			s.t.Fatal(err)
		}
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `"`+netNS+`/web:http cluster IP"`) }) {
			s.t.Errorf("the rules of %s/web are gone from %s too", netNS, n.Name)
		}
	}
	s.reachesAll("http://web/", pods)
}

// diagnose logs what a failed networking step needs to be understood.
func (s *netScenario) diagnose() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"get", "nodes", "-o", "wide"},
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "services,endpointslices", "-A"},
		{"get", "events", "-n", netNS},
	} {
		out, err := s.c.Kubectl(ctx, args...)
		if err != nil {
			out += err.Error()
		}
		s.t.Logf("kubectl-lite %s:\n%s", strings.Join(args, " "), out)
	}
	for _, n := range s.nodes {
		out, err := s.c.Exec(ctx, n.Name, "sh", "-c", "ip route; iptables-save -t nat | grep -c KUBE-")
		if err != nil {
			out += err.Error()
		}
		s.t.Logf("routes and KUBE- nat rule count of %s:\n%s", n.Name, out)
		s.t.Logf("last log lines of %s:\n%s", n.Name, s.c.Logs(ctx, n.Name, 25))
	}
}
