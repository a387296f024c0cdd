package integration

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

const svcPath = "/api/v1/namespaces/default/services"

func svcBody(name, typ string, extra map[string]any, ports ...map[string]any) map[string]any {
	if len(ports) == 0 {
		ports = []map[string]any{{"port": 80, "targetPort": 8080}}
	}
	spec := map[string]any{"selector": map[string]any{"app": name}, "ports": ports}
	if typ != "" {
		spec["type"] = typ
	}
	for k, v := range extra {
		spec[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": name}, "spec": spec}
}

func specOf(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

func nodePorts(m map[string]any) []int {
	var out []int
	for _, p := range specOf(m)["ports"].([]any) {
		if np, ok := p.(map[string]any)["nodePort"].(float64); ok {
			out = append(out, int(np))
		}
	}
	return out
}

func statusMessage(t *testing.T, r response) string {
	t.Helper()
	m := r.obj(t)
	msg, _ := m["message"].(string)
	return msg
}

func TestServiceAllocation(t *testing.T) {
	s := apiservertest.Start(t, func(o *app.Options) {
		o.ServiceClusterIPRange = "10.96.0.0/24"
		o.ServiceNodePortRange = "30000-30009"
	})
	c := newClient(t, s)
	_, cidr, _ := net.ParseCIDR("10.96.0.0/24")

	// The apiserver's own Service holds the first address.
	var k map[string]any
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := c.do("GET", svcPath+"/kubernetes", nil, "")
		if r.Code == 200 {
			k = r.obj(t)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kubernetes service: %d %s", r.Code, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ip := specOf(k)["clusterIP"]; ip != "10.96.0.1" {
		t.Fatalf("kubernetes service clusterIP %v, want 10.96.0.1", ip)
	}
	c.must(200, "GET", "/api/v1/namespaces/default/endpoints/kubernetes", nil)
	// Service proxies read EndpointSlices: the apiserver writes one too.
	for {
		r := c.do("GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes", nil, "")
		if r.Code == 200 {
			sl := r.obj(t)
			labels, _ := sl["metadata"].(map[string]any)["labels"].(map[string]any)
			eps, _ := sl["endpoints"].([]any)
			ports, _ := sl["ports"].([]any)
			if labels["kubernetes.io/service-name"] != "kubernetes" || len(eps) != 1 || len(ports) != 1 {
				t.Fatalf("kubernetes EndpointSlice %s; want the service-name label, one endpoint and one port", r.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kubernetes EndpointSlice: %d %s", r.Code, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Dynamic ClusterIPs: in range, distinct, never the first address.
	seen := map[string]bool{"10.96.0.1": true}
	for i := 0; i < 20; i++ {
		out := c.must(201, "POST", svcPath, svcBody(fmt.Sprintf("web-%d", i), "", nil))
		ip := specOf(out)["clusterIP"].(string)
		ips := specOf(out)["clusterIPs"].([]any)
		if !cidr.Contains(net.ParseIP(ip)) || seen[ip] || len(ips) != 1 || ips[0] != ip {
			t.Fatalf("service web-%d got clusterIP %q clusterIPs %v (seen %v)", i, ip, ips, seen[ip])
		}
		seen[ip] = true
	}

	// A requested address: taken, out of range, free.
	r := c.do("POST", svcPath, svcBody("dup", "", map[string]any{"clusterIP": "10.96.0.1"}), "")
	if want := `Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated`; r.Code != 422 || statusMessage(t, r) != want {
		t.Fatalf("duplicate clusterIP: %d %q\nwant %q", r.Code, statusMessage(t, r), want)
	}
	r = c.do("POST", svcPath, svcBody("far", "", map[string]any{"clusterIP": "10.0.0.5"}), "")
	if r.Code != 422 || !strings.Contains(statusMessage(t, r), "the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/24") {
		t.Fatalf("out-of-range clusterIP: %d %s", r.Code, r.Body)
	}
	c.must(404, "GET", svcPath+"/far", nil)
	// In the lower band, which dynamic allocation leaves to requests (an
	// address above it may already be one of the 20 above's).
	fixed := c.must(201, "POST", svcPath, svcBody("fixed", "", map[string]any{"clusterIP": "10.96.0.12"}))
	if specOf(fixed)["clusterIP"] != "10.96.0.12" {
		t.Fatalf("requested clusterIP not kept: %v", specOf(fixed)["clusterIP"])
	}
	// Deleting frees it for the next Service.
	c.must(200, "DELETE", svcPath+"/fixed", nil)
	c.must(201, "POST", svcPath, svcBody("fixed2", "", map[string]any{"clusterIP": "10.96.0.12"}))

	// Headless: no address is allocated.
	hl := c.must(201, "POST", svcPath, svcBody("headless", "", map[string]any{"clusterIP": "None"}))
	if specOf(hl)["clusterIP"] != "None" {
		t.Fatalf("headless clusterIP %v", specOf(hl)["clusterIP"])
	}

	// NodePorts: allocated in range, a requested one only once.
	np := c.must(201, "POST", svcPath, svcBody("np", "NodePort", nil,
		map[string]any{"name": "http", "port": 80}, map[string]any{"name": "admin", "port": 81, "nodePort": 30005}))
	ports := nodePorts(np)
	if len(ports) != 2 || ports[1] != 30005 || ports[0] < 30000 || ports[0] > 30009 || ports[0] == 30005 {
		t.Fatalf("nodePorts %v", ports)
	}
	r = c.do("POST", svcPath, svcBody("np2", "NodePort", nil, map[string]any{"port": 80, "nodePort": 30005}), "")
	if want := `Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30005: provided port is already allocated`; r.Code != 422 || statusMessage(t, r) != want {
		t.Fatalf("duplicate nodePort: %d %q", r.Code, statusMessage(t, r))
	}
	r = c.do("POST", svcPath, svcBody("np3", "NodePort", nil, map[string]any{"port": 80, "nodePort": 31000}), "")
	if r.Code != 422 || !strings.Contains(statusMessage(t, r), "provided port is not in the valid range. The range of valid ports is 30000-30009") {
		t.Fatalf("out-of-range nodePort: %d %s", r.Code, r.Body)
	}
	// An update keeps the clusterIP and nodePorts; NodePort → ClusterIP frees the ports.
	np["spec"].(map[string]any)["type"] = "ClusterIP"
	for _, p := range specOf(np)["ports"].([]any) {
		delete(p.(map[string]any), "nodePort")
	}
	upd := c.must(200, "PUT", svcPath+"/np", np)
	if specOf(upd)["clusterIP"] != specOf(np)["clusterIP"] || len(nodePorts(upd)) != 0 {
		t.Fatalf("after type change: clusterIP %v nodePorts %v", specOf(upd)["clusterIP"], nodePorts(upd))
	}
	c.must(201, "POST", svcPath, svcBody("np4", "NodePort", nil, map[string]any{"port": 80, "nodePort": 30005}))

	// Fill the NodePort range; the next dynamic one is a clean error and
	// takes no ClusterIP with it.
	for i := 0; i < 9; i++ {
		c.must(201, "POST", svcPath, svcBody(fmt.Sprintf("fill-%d", i), "NodePort", nil))
	}
	r = c.do("POST", svcPath, svcBody("toomany", "NodePort", nil), "")
	if r.Code != 500 || !strings.Contains(statusMessage(t, r), "failed to allocate a nodePort: range is full") {
		t.Fatalf("full nodePort range: %d %s", r.Code, r.Body)
	}
	// Dry run allocates nothing.
	dry := c.must(201, "POST", svcPath+"?dryRun=All", svcBody("dry", "", nil))
	dryIP := specOf(dry)["clusterIP"].(string)
	if !cidr.Contains(net.ParseIP(dryIP)) {
		t.Fatalf("dry run clusterIP %q", dryIP)
	}
	again := c.must(201, "POST", svcPath, svcBody("dry", "", map[string]any{"clusterIP": dryIP}))
	if specOf(again)["clusterIP"] != dryIP {
		t.Fatalf("the dry run reserved %s", dryIP)
	}
}

// TestHealthCheckNodePortAllocation: a LoadBalancer Service with
// externalTrafficPolicy Local gets a healthCheckNodePort from the node port
// range, as kube-apiserver allocates it (one asked for is kept), held
// against every other Service until the Service stops needing it or goes.
func TestHealthCheckNodePortAllocation(t *testing.T) {
	s := apiservertest.Start(t, func(o *app.Options) {
		o.ServiceNodePortRange = "30000-30009"
	})
	c := newClient(t, s)
	hcPort := func(m map[string]any) int {
		v, _ := specOf(m)["healthCheckNodePort"].(float64)
		return int(v)
	}
	lb := c.must(201, "POST", svcPath, svcBody("lb", "LoadBalancer", map[string]any{"externalTrafficPolicy": "Local"}))
	h, ports := hcPort(lb), nodePorts(lb)
	if h < 30000 || h > 30009 || len(ports) != 1 || ports[0] == h {
		t.Fatalf("LoadBalancer Local: healthCheckNodePort %d, nodePorts %v; want a port of 30000-30009 apart from the node ports", h, ports)
	}
	// Held: no other Service gets it.
	r := c.do("POST", svcPath, svcBody("taker", "NodePort", nil, map[string]any{"port": 80, "nodePort": h}), "")
	if want := fmt.Sprintf(`Service "taker" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated`, h); r.Code != 422 || statusMessage(t, r) != want {
		t.Fatalf("a NodePort Service asking for the health check port: %d %q, want 422 %q", r.Code, statusMessage(t, r), want)
	}
	// An update that keeps Local keeps the port; Cluster frees it.
	specOf(lb)["selector"] = map[string]any{"app": "lb2"}
	delete(specOf(lb), "healthCheckNodePort")
	lb = c.must(200, "PUT", svcPath+"/lb", lb)
	if hcPort(lb) != h {
		t.Fatalf("after an update: healthCheckNodePort %d, want %d kept", hcPort(lb), h)
	}
	specOf(lb)["externalTrafficPolicy"] = "Cluster"
	delete(specOf(lb), "healthCheckNodePort")
	lb = c.must(200, "PUT", svcPath+"/lb", lb)
	if hcPort(lb) != 0 {
		t.Fatalf("externalTrafficPolicy Cluster: healthCheckNodePort %d, want none", hcPort(lb))
	}
	c.must(201, "POST", svcPath, svcBody("taker", "NodePort", nil, map[string]any{"port": 80, "nodePort": h}))

	// One asked for is given; deleting the Service frees it.
	var free int
	for p := 30000; p <= 30009; p++ {
		if p != h && p != ports[0] {
			free = p
			break
		}
	}
	asked := c.must(201, "POST", svcPath, svcBody("asked", "LoadBalancer", map[string]any{"externalTrafficPolicy": "Local", "healthCheckNodePort": free}))
	if hcPort(asked) != free {
		t.Fatalf("healthCheckNodePort %d asked for, got %d", free, hcPort(asked))
	}
	c.must(200, "DELETE", svcPath+"/asked", nil)
	c.must(201, "POST", svcPath, svcBody("taker2", "NodePort", nil, map[string]any{"port": 80, "nodePort": free}))
}
