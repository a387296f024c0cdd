package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// lbNS is the namespace of the load balancer scenario.
const lbNS = "e2e-lb"

// lbManifest: two echo pods, one per node, whose CGI /cgi-bin/whoami
// answers "CLIENT-ADDRESS POD-NAME"; a LoadBalancer Service with each
// external traffic policy, one of another loadBalancerClass, and an
// ExternalName Service naming the first.
const lbManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: ` + lbNS + `
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cgi
  namespace: ` + lbNS + `
data:
  whoami: |
    #!/bin/sh
    printf 'Content-Type: text/plain\r\n\r\n%s %s\n' "$REMOTE_ADDR" "$(hostname)"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: echo
  namespace: ` + lbNS + `
spec:
  replicas: 2
  selector:
    matchLabels:
      app: echo
  template:
    metadata:
      labels:
        app: echo
    spec:
      terminationGracePeriodSeconds: 2
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels:
                app: echo
      containers:
      - name: echo
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
        volumeMounts:
        - name: cgi
          mountPath: /www/cgi-bin
      volumes:
      - name: cgi
        configMap:
          name: cgi
          defaultMode: 0755
---
apiVersion: v1
kind: Service
metadata:
  name: echo-cluster
  namespace: ` + lbNS + `
spec:
  type: LoadBalancer
  selector:
    app: echo
  ports:
  - name: http
    port: 8090
    targetPort: http
---
apiVersion: v1
kind: Service
metadata:
  name: echo-local
  namespace: ` + lbNS + `
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector:
    app: echo
  ports:
  - name: http
    port: 8091
    targetPort: http
---
apiVersion: v1
kind: Service
metadata:
  name: echo-other-class
  namespace: ` + lbNS + `
spec:
  type: LoadBalancer
  loadBalancerClass: example.com/other
  selector:
    app: echo
  ports:
  - name: http
    port: 8092
    targetPort: http
---
apiVersion: v1
kind: Service
metadata:
  name: alias
  namespace: ` + lbNS + `
spec:
  type: ExternalName
  externalName: echo-cluster.` + lbNS + `.svc.cluster.local
`

// TestLoadBalancer is issue 29's end-to-end proof of LoadBalancer and
// ExternalName Services on the compose cluster, from the host:
//
//   - echo-cluster (externalTrafficPolicy Cluster) gets both nodes'
//     addresses from the service-lb-controller, and each address answers
//     on the Service's port, from both pods, the client masqueraded;
//   - echo-local (Local) answers on each node's address from that node's
//     pod only, with the client's own address (the host's on the compose
//     network) kept, and its healthCheckNodePort says 200 with one local
//     endpoint on each node;
//   - echo-other-class (loadBalancerClass example.com/other) gets no
//     address from the built-in load balancer;
//   - alias (ExternalName naming echo-cluster) resolves, inside a pod,
//     through its CNAME to echo-cluster's ClusterIP.
func TestLoadBalancer(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(ctx, "delete", "namespace", lbNS, "--ignore-not-found", "--wait=false"); err != nil {
			t.Errorf("delete namespace %s: %v", lbNS, err)
		}
		t.Logf("load balancer scenario: %.1fs wall time", time.Since(start).Seconds())
	})
	diagnose := func() {
		if !t.Failed() {
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, _ := c.Kubectl(dctx, "get", "pods,services,endpointslices,events", "-n", lbNS, "-o", "wide")
		t.Logf("kubectl-lite get pods,services,endpointslices,events -n %s:\n%s", lbNS, out)
		t.Logf("last log lines of controller-manager:\n%s", c.Logs(dctx, "controller-manager", 30))
	}
	defer diagnose()
	(&storage{c: c}).apply(t, ctx, lbManifest)

	// The echo pods, one per node.
	podOn := map[string]string{} // node name -> pod name
	within(t, ctx, 3*time.Minute, "an echo pod ready on each node", func(ctx context.Context) (bool, string, error) {
		var l api.List[api.Pod]
		if err := c.KubectlJSON(ctx, &l, "get", "pods", "-n", lbNS, "-l", "app=echo"); err != nil {
			return false, "", Retry(err)
		}
		clear(podOn)
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil && running(p) && podReady(p) {
				podOn[p.Spec.NodeName] = p.Name
			}
		}
		return len(podOn) == workers, describe(l.Items), nil
	})
	var nodes api.List[api.Node]
	if err := c.KubectlJSON(ctx, &nodes, "get", "nodes"); err != nil {
		t.Fatal(err)
	}
	nodeOf := map[string]string{} // InternalIP -> node name
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if a.Type == api.NodeInternalIP {
				nodeOf[a.Address] = n.Name
			}
		}
	}
	var nodeIPs []string
	for ip := range nodeOf {
		nodeIPs = append(nodeIPs, ip)
	}
	slices.Sort(nodeIPs)
	gateway, err := c.Run(ctx, "docker", "network", "inspect", c.Project+"_default", "-f", "{{(index .IPAM.Config 0).Gateway}}")
	if err != nil {
		t.Fatal(err)
	}
	gateway = strings.TrimSpace(gateway)

	// The addresses of the built-in load balancer.
	service := func(ctx context.Context, name string) (api.Service, error) {
		var s api.Service
		err := c.KubectlJSON(ctx, &s, "get", "service", name, "-n", lbNS)
		return s, err
	}
	ingress := func(s api.Service) []string {
		var out []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			out = append(out, in.IP)
		}
		slices.Sort(out)
		return out
	}
	for _, name := range []string{"echo-cluster", "echo-local"} {
		within(t, ctx, time.Minute, name+" given the nodes' addresses", func(ctx context.Context) (bool, string, error) {
			s, err := service(ctx, name)
			if err != nil {
				return false, "", Retry(err)
			}
			return slices.Equal(ingress(s), nodeIPs), fmt.Sprintf("ingress %v, nodes %v", ingress(s), nodeIPs), nil
		})
	}

	// whoami GETs /cgi-bin/whoami on addr from the host: the client
	// address the pod saw and the pod's name.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	whoami := func(ctx context.Context, addr string) (client, pod string, err error) {
		req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/cgi-bin/whoami", nil)
		if err != nil {
			return "", "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		f := strings.Fields(string(b))
		if resp.StatusCode != 200 || len(f) != 2 {
			return "", "", fmt.Errorf("GET %s: %d %q", req.URL, resp.StatusCode, b)
		}
		// busybox httpd gives an IPv4 client as "[::ffff:A.B.C.D]".
		client = strings.TrimPrefix(strings.Trim(f[0], "[]"), "::ffff:")
		return client, f[1], nil
	}

	// Cluster policy: every address reaches both pods, the client address
	// masqueraded to a node's.
	for _, ip := range nodeIPs {
		addr := net.JoinHostPort(ip, "8090")
		seen := map[string]bool{}
		within(t, ctx, time.Minute, "echo-cluster on "+addr+" answered from the host by both pods", func(ctx context.Context) (bool, string, error) {
			client, pod, err := whoami(ctx, addr)
			if err != nil {
				return false, "", Retry(err)
			}
			// Masqueraded: the pod sees the node's address on the way to
			// it (its bridge, or its node address when the pod is on the
			// other node), never the host's.
			if client == gateway {
				return false, "", fmt.Errorf("externalTrafficPolicy Cluster: the pod %s saw the host's own address %s, want it masqueraded to a node's", pod, client)
			}
			seen[pod] = true
			return len(seen) == workers, fmt.Sprintf("pods seen %v", seen), nil
		})
	}

	// Local policy: each node's address reaches its own pod, which sees
	// the host's address.
	local, err := service(ctx, "echo-local")
	if err != nil {
		t.Fatal(err)
	}
	if local.Spec.HealthCheckNodePort == 0 {
		t.Fatalf("echo-local has no healthCheckNodePort: %+v", local.Spec)
	}
	for _, ip := range nodeIPs {
		addr := net.JoinHostPort(ip, "8091")
		for i := range 6 {
			var client, pod string
			within(t, ctx, time.Minute, fmt.Sprintf("echo-local on %s answered from the host (%d)", addr, i), func(ctx context.Context) (bool, string, error) {
				var err error
				client, pod, err = whoami(ctx, addr)
				return err == nil, fmt.Sprint(err), nil
			})
			if want := podOn[nodeOf[ip]]; pod != want {
				t.Errorf("externalTrafficPolicy Local: %s answered by %s, want %s, the pod of %s", addr, pod, want, nodeOf[ip])
			}
			if client != gateway {
				t.Errorf("externalTrafficPolicy Local: the pod saw client %s, want the host's own address %s", client, gateway)
			}
		}
		hcURL := "http://" + net.JoinHostPort(ip, strconv.Itoa(int(local.Spec.HealthCheckNodePort))) + "/"
		within(t, ctx, time.Minute, "health check "+hcURL+" says one local endpoint", func(ctx context.Context) (bool, string, error) {
			req, _ := http.NewRequestWithContext(ctx, "GET", hcURL, nil)
			resp, err := hc.Do(req)
			if err != nil {
				return false, err.Error(), nil
			}
			defer resp.Body.Close()
			var body struct {
				Service struct {
					Namespace, Name string
				}
				LocalEndpoints int `json:"localEndpoints"`
			}
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &body); err != nil {
				return false, "", fmt.Errorf("health check %s: %d %q: %v", hcURL, resp.StatusCode, b, err)
			}
			return resp.StatusCode == 200 && body.LocalEndpoints == 1 && body.Service.Name == "echo-local", fmt.Sprintf("%d %s", resp.StatusCode, b), nil
		})
	}

	// Another class: nothing from the built-in load balancer.
	if s, err := service(ctx, "echo-other-class"); err != nil {
		t.Error(err)
	} else if len(s.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("echo-other-class (loadBalancerClass example.com/other) got %v from the built-in load balancer", s.Status.LoadBalancer.Ingress)
	}

	// ExternalName: alias resolves through its CNAME to echo-cluster.
	cluster, err := service(ctx, "echo-cluster")
	if err != nil {
		t.Fatal(err)
	}
	pod := podOn[nodes.Items[0].Name]
	within(t, ctx, time.Minute, "alias."+lbNS+" resolving to echo-cluster's ClusterIP "+cluster.Spec.ClusterIP+" inside a pod", func(ctx context.Context) (bool, string, error) {
		out, err := c.Kubectl(ctx, "exec", "-n", lbNS, pod, "--", "nslookup", "alias."+lbNS+".svc.cluster.local")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.Contains(out, "Address: "+cluster.Spec.ClusterIP) || strings.Contains(out, "Address 1: "+cluster.Spec.ClusterIP), out, nil
	})
}
