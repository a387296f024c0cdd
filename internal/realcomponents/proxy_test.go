package realcomponents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostIP is an IPv4 address of this machine other than a loopback one:
// the proxy subresources refuse loopback pod and node addresses, so the
// backend a test proxies to listens there.
func hostIP(t *testing.T) string {
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
	t.Fatalf("no global unicast IPv4 address on this machine (interfaces: %v): the proxy test needs one to stand for a pod IP", addrs)
	return ""
}

// startProxyBackend is the HTTP server standing for a pod: it echoes the
// request (method, path, query, body, the X-Forwarded headers), serves an
// HTML page with an absolute link and a redirect, on ip.
func startProxyBackend(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><body><a href="/rewriteme">test</a> <a href="relative">r</a> <img src="/img/x.png"></body></html>`)
		case "/redirect":
			http.Redirect(w, r, "/elsewhere/?a=b", http.StatusFound)
		default:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{
				"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(body),
				"forwardedURI": r.Header.Get("X-Forwarded-Uri"), "forwardedFor": r.Header.Get("X-Forwarded-For"),
				"authorization": r.Header.Get("Authorization"),
			})
		}
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// proxyAnswer is what a client of the proxy sees: the code, the Location
// header, the Content-Type and the body.
type proxyAnswer struct {
	Code        int
	Location    string
	ContentType string
	Body        string
}

// rawRequest sends one request to e without following redirects, as
// user when user is not "" (impersonated by the administrator).
func rawRequest(t *testing.T, e *endpoint, method, path, body string, user ...string) proxyAnswer {
	t.Helper()
	hc := &http.Client{Transport: e.hc.Transport, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(user) > 0 {
		req.Header.Set("Impersonate-User", user[0])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", e.name, method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return proxyAnswer{Code: resp.StatusCode, Location: resp.Header.Get("Location"), ContentType: resp.Header.Get("Content-Type"), Body: string(data)}
}

// TestProxySubresourcesAsKube sends the same requests to pods/NAME/proxy,
// services/NAME/proxy and nodes/NAME/proxy of the real kube-apiserver
// v1.37 and of minik8s' apiserver, the pod standing for a server of the
// test on this machine's address, and compares code, Location, content
// type and body: every method with path, query and body passed on, the
// redirect of ".../proxy", the rewriting of HTML links and Location, a
// Service's port by name and number to its endpoint, and the refusals (a
// pod without IP or with a loopback one, a missing port, a Service
// without endpoints, a node of loopback address, "..", a closed port).
func TestProxySubresourcesAsKube(t *testing.T) {
	t.Parallel()
	ip := hostIP(t)
	port := startProxyBackend(t, ip)
	ps := strconv.Itoa(port)
	both := startBoth(t)
	const ns = "/api/v1/namespaces/proxy"
	both.must(t, http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"proxy"}}`)
	for _, e := range both.each() {
		if code, out := e.do(t, "POST", ns+"/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: create the default service account: %d %v", e.name, code, out)
		}
	}
	pod := func(name, podIP string) {
		both.must(t, http.StatusCreated, "POST", ns+"/pods", fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":"web"}},
			"spec":{"automountServiceAccountToken":false,"containers":[{"name":"app","image":"agnhost","ports":[{"containerPort":%d}]}]}}`, name, port))
		if podIP != "" {
			both.must(t, http.StatusOK, "PATCH", ns+"/pods/"+name+"/status",
				fmt.Sprintf(`{"status":{"podIP":%q,"podIPs":[{"ip":%q}]}}`, podIP, podIP))
		}
	}
	pod("web", ip)
	pod("noip", "")
	pod("loop", "127.0.0.1")
	both.must(t, http.StatusCreated, "POST", ns+"/services", fmt.Sprintf(`{"metadata":{"name":"web"},
		"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":%d}]}}`, port))
	both.must(t, http.StatusCreated, "POST", ns+"/services", `{"metadata":{"name":"empty"},
		"spec":{"selector":{"app":"none"},"ports":[{"port":80}]}}`)
	// No endpointslice controller runs here: the test writes the slice.
	both.must(t, http.StatusCreated, "POST", "/apis/discovery.k8s.io/v1/namespaces/proxy/endpointslices", fmt.Sprintf(`{
		"metadata":{"name":"web-1","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4",
		"endpoints":[{"addresses":[%q],"conditions":{"ready":true},"targetRef":{"kind":"Pod","namespace":"proxy","name":"web"}}],
		"ports":[{"name":"http","port":%d,"protocol":"TCP"}]}`, ip, port))
	node := func(name, addrs string) {
		both.must(t, http.StatusCreated, "POST", "/api/v1/nodes", `{"metadata":{"name":"`+name+`"}}`)
		both.must(t, http.StatusOK, "PATCH", "/api/v1/nodes/"+name+"/status",
			`{"status":{"addresses":`+addrs+`,"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}}}}`)
	}
	node("loopback-node", `[{"type":"InternalIP","address":"127.0.0.1"}]`)
	node("bare-node", `[]`)
	node("host-node", fmt.Sprintf(`[{"type":"InternalIP","address":%q}]`, ip))

	same := func(t *testing.T, method, path, body string, user ...string) proxyAnswer {
		t.Helper()
		k, o := rawRequest(t, both.kube, method, path, body, user...), rawRequest(t, both.ours, method, path, body, user...)
		t.Logf("%s %s: kube-apiserver %d %q %q", method, path, k.Code, k.Location, k.Body)
		if !reflect.DeepEqual(k, o) {
			t.Errorf("%s %s:\nkube-apiserver %+v\nminik8s        %+v", method, path, k, o)
		}
		return k
	}
	// kube-apiserver reads EndpointSlices from an informer: wait until
	// it sees the slice.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitFor(ctx, t, "kube-apiserver to see the EndpointSlice", func() (bool, string) {
		a := rawRequest(t, both.kube, "GET", ns+"/services/web:http/proxy/", "")
		return a.Code == http.StatusOK, fmt.Sprint(a)
	})

	t.Run("pod", func(t *testing.T) {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"} {
			if a := same(t, m, ns+"/pods/web/proxy/some/path/with/"+m+"?a=1&b=two", `{"x":1}`); a.Code != http.StatusOK {
				t.Errorf("%s: kube-apiserver answered %d", m, a.Code)
			}
		}
		same(t, "GET", ns+"/pods/web/proxy/", "")
		same(t, "GET", ns+"/pods/web:"+ps+"/proxy/x/", "")
		same(t, "GET", ns+"/pods/http:web:"+ps+"/proxy/x", "")
		same(t, "POST", ns+"/pods/web/proxy?method=POST", "")
	})
	t.Run("redirects and rewriting", func(t *testing.T) {
		for _, m := range []string{"GET", "HEAD"} {
			if a := same(t, m, ns+"/pods/web/proxy?method="+m, ""); a.Code != http.StatusMovedPermanently {
				t.Errorf("%s: kube-apiserver answered %d", m, a.Code)
			}
			same(t, m, ns+"/services/web:http/proxy", "")
		}
		same(t, "GET", ns+"/pods/web/proxy/page/", "")
		same(t, "GET", ns+"/pods/web:"+ps+"/proxy/page/", "")
		same(t, "GET", ns+"/services/web:http/proxy/page/", "")
		same(t, "GET", ns+"/pods/web/proxy/redirect", "")
		same(t, "GET", ns+"/services/web:80/proxy/redirect", "")
	})
	t.Run("service", func(t *testing.T) {
		same(t, "GET", ns+"/services/web:http/proxy/a/b?c=d", "")
		same(t, "PUT", ns+"/services/http:web:80/proxy/a", "body")
		same(t, "GET", ns+"/services/web/proxy/", "")
		same(t, "GET", ns+"/services/web:81/proxy/", "")
		same(t, "GET", ns+"/services/empty/proxy/", "")
		same(t, "GET", ns+"/services/ghost/proxy/", "")
		same(t, "GET", ns+"/services/ghost:80/proxy/", "")
		same(t, "GET", ns+"/services/ftp:web:80/proxy/", "")
	})
	t.Run("refusals", func(t *testing.T) {
		same(t, "GET", ns+"/pods/noip/proxy/", "")
		same(t, "GET", ns+"/pods/loop/proxy/", "")
		same(t, "GET", ns+"/pods/ghost/proxy/", "")
		same(t, "GET", ns+"/pods/ftp:web:80/proxy/", "")
		same(t, "GET", ns+"/pods/a:b:c:d/proxy/", "")
		same(t, "GET", ns+"/pods/web:1/proxy/", "")
		same(t, "POST", ns+"/pods/web/proxy/x?dryRun=All", "")
		same(t, "GET", "/api/v1/nodes/loopback-node/proxy/healthz", "")
		same(t, "GET", "/api/v1/nodes/bare-node/proxy/healthz", "")
		same(t, "GET", "/api/v1/nodes/ghost/proxy/healthz", "")
		same(t, "GET", "/api/v1/nodes/http:host-node:"+ps+"/proxy/from/node", "")
	})
	t.Run("authorization by the method's verb", func(t *testing.T) {
		both.must(t, http.StatusCreated, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/proxy/roles",
			`{"metadata":{"name":"proxy-getter"},"rules":[{"apiGroups":[""],"resources":["pods/proxy","services/proxy"],"verbs":["get","patch"]}]}`)
		both.must(t, http.StatusCreated, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/proxy/rolebindings",
			`{"metadata":{"name":"proxy-getter"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"proxy-getter"},
			"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"proxy-user"}]}`)
		for _, e := range both.each() {
			waitFor(ctx, t, e.name+" to authorize proxy-user", func() (bool, string) {
				a := rawRequest(t, e, "GET", ns+"/pods/web/proxy/x", "", "proxy-user")
				return a.Code == http.StatusOK, fmt.Sprint(a)
			})
		}
		same(t, "GET", ns+"/pods/web/proxy/x", "", "proxy-user")
		same(t, "HEAD", ns+"/pods/web/proxy/x", "", "proxy-user")
		same(t, "PATCH", ns+"/services/web:http/proxy/x", "{}", "proxy-user")
		for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
			if a := same(t, m, ns+"/pods/web/proxy/x", "", "proxy-user"); a.Code != http.StatusForbidden {
				t.Errorf("%s as proxy-user: kube-apiserver answered %d", m, a.Code)
			}
		}
		same(t, "GET", "/api/v1/nodes/host-node/proxy/pods", "", "proxy-user")
	})
	t.Run("dot segments", func(t *testing.T) {
		for _, p := range []string{
			"/pods/web/proxy/../../secrets",
			"/pods/web/proxy/a/../b",
			"/pods/web/proxy/a/%2e%2e/b",
			"/pods/web/proxy/..",
			"/pods/../proxy/",
			"/pods/web/proxy/./x",
		} {
			same(t, "GET", ns+p, "")
		}
	})
}
