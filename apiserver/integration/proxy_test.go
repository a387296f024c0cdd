package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// nonLoopbackIP is an IPv4 address of this machine that is not a
// loopback one: the proxy subresources refuse loopback pod and node
// addresses (as kube-apiserver does), so the servers standing for pods
// and kubelets listen there.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatalf("no global unicast IPv4 address on this machine (%v): the proxy test needs one to stand for a pod IP", addrs)
	return ""
}

// echoUpgradeServer answers an upgrade to protocol "echo" with 101 and
// then echoes each line prefixed "echo: "; any other request gets
// "METHOD PATH".
func echoUpgradeServer(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "echo" {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprint(buf, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	_ = buf.Flush()
	for {
		line, err := buf.ReadString('\n')
		if err != nil {
			return
		}
		fmt.Fprint(buf, "echo: "+line)
		_ = buf.Flush()
	}
}

// TestProxySubresources covers what the "as kube" test cannot without a
// kubelet: an upgraded connection spliced through pods/NAME/proxy,
// nodes/NAME/proxy reaching the kubelet's HTTPS port, and admission of
// the proxy CONNECT with its path.
func TestProxySubresources(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ip := nonLoopbackIP(t)

	pl, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	podSrv := &httptest.Server{Listener: pl, Config: &http.Server{Handler: http.HandlerFunc(echoUpgradeServer), ReadHeaderTimeout: 10 * time.Second}}
	podSrv.Start()
	t.Cleanup(podSrv.Close)
	podPort := pl.Addr().(*net.TCPAddr).Port

	scenarioNamespace(c, "proxy")
	p := pod("web", "app")
	p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["ports"] = []any{map[string]any{"containerPort": podPort}}
	c.must(201, "POST", "/api/v1/namespaces/proxy/pods", p)
	c.must(200, "PATCH", "/api/v1/namespaces/proxy/pods/web/status",
		fmt.Sprintf(`{"status":{"podIP":%q,"podIPs":[{"ip":%q}]}}`, ip, ip), "application/merge-patch+json")

	t.Run("upgrade spliced through pods/proxy", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL(), "http://"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprint(conn, "GET /api/v1/namespaces/proxy/pods/web/proxy/stream HTTP/1.1\r\nHost: apiserver\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("got %d %s, want 101", resp.StatusCode, body)
		}
		for _, msg := range []string{"one", "two"} {
			fmt.Fprint(conn, msg+"\n")
			line, err := br.ReadString('\n')
			if err != nil || line != "echo: "+msg+"\n" {
				t.Fatalf("after the upgrade: %q %v", line, err)
			}
		}
	})

	t.Run("nodes/proxy reaches the kubelet over HTTPS", func(t *testing.T) {
		var mu sync.Mutex
		var asked []string
		kl, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		kubelet := &httptest.Server{Listener: kl, Config: &http.Server{ReadHeaderTimeout: 10 * time.Second,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				asked = append(asked, r.Method+" "+r.URL.Path+" tls="+strconv.FormatBool(r.TLS != nil))
				mu.Unlock()
				fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","items":[]}`)
			})}}
		kubelet.StartTLS()
		t.Cleanup(kubelet.Close)
		c.must(201, "POST", "/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "node-p"}})
		c.must(200, "PATCH", "/api/v1/nodes/node-p/status", fmt.Sprintf(`{"status":{"addresses":[{"type":"InternalIP","address":%q}],
			"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}}}}`, ip, kl.Addr().(*net.TCPAddr).Port), "application/merge-patch+json")
		for _, path := range []string{"/api/v1/nodes/node-p/proxy/pods", "/api/v1/nodes/node-p:" + strconv.Itoa(kl.Addr().(*net.TCPAddr).Port) + "/proxy/pods"} {
			r := c.do("GET", path, nil, "")
			if r.Code != 200 || !strings.Contains(string(r.Body), `"PodList"`) {
				t.Errorf("GET %s: %d %s", path, r.Code, r.Body)
			}
		}
		// Another port of the node is plain HTTP unless asked otherwise.
		r := c.do("GET", "/api/v1/nodes/node-p:"+strconv.Itoa(podPort)+"/proxy/other", nil, "")
		if r.Code != 200 || string(r.Body) != "GET /other" {
			t.Errorf("another port of the node: %d %s", r.Code, r.Body)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"GET /pods tls=true", "GET /pods tls=true"}; strings.Join(asked, ",") != strings.Join(want, ",") {
			t.Errorf("the kubelet was asked %q, want %q", asked, want)
		}
	})

	t.Run("admission sees the CONNECT with its path", func(t *testing.T) {
		createCached(t, s, c, vapPath, "validatingadmissionpolicies", map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
			"metadata": map[string]any{"name": "no-admin-proxy"},
			"spec": map[string]any{
				"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
					"operations": []string{"CONNECT"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods/proxy"}}}},
				"validations": []any{map[string]any{"expression": "object.kind == 'PodProxyOptions' && !object.path.startsWith('/admin')", "message": "no admin pages"}},
			}})
		c.must(201, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", map[string]any{
			"metadata": map[string]any{"name": "no-admin-proxy"},
			"spec":     map[string]any{"policyName": "no-admin-proxy", "validationActions": []string{"Deny"}}})
		deadline := time.Now().Add(30 * time.Second)
		for {
			r := c.do("GET", "/api/v1/namespaces/proxy/pods/web/proxy/admin/users", nil, "")
			if r.Code == http.StatusUnprocessableEntity && strings.Contains(string(r.Body), "no admin pages") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the policy did not deny the proxy to /admin: %d %s", r.Code, r.Body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if r := c.do("GET", "/api/v1/namespaces/proxy/pods/web/proxy/public", nil, ""); r.Code != 200 || string(r.Body) != "GET /public" {
			t.Errorf("an admitted path: %d %s", r.Code, r.Body)
		}
	})
}
