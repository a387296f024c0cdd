package integration

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// fakeKubelet is a kubelet's HTTPS endpoint that answers every request
// 200 "reached the kubelet" and records what it was asked.
type fakeKubelet struct {
	srv  *httptest.Server
	mu   sync.Mutex
	asks []string
}

func startFakeKubelet(t *testing.T) *fakeKubelet {
	t.Helper()
	k := &fakeKubelet{}
	k.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.asks = append(k.asks, r.URL.Path+"?"+r.URL.RawQuery)
		k.mu.Unlock()
		_, _ = w.Write([]byte("reached the kubelet"))
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *fakeKubelet) asked() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.asks...)
}

// connectNode creates Node NAME whose kubelet is k, and in namespace ns a
// pod "web" (container "app") bound to it.
func connectNode(t *testing.T, c *tclient, k *fakeKubelet, name string) {
	t.Helper()
	c.must(201, "POST", "/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": name}})
	_, port, _ := net.SplitHostPort(k.srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	node := c.must(200, "GET", "/api/v1/nodes/"+name, nil)
	node["status"] = map[string]any{"addresses": []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
		"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": p}}}
	c.must(200, "PUT", "/api/v1/nodes/"+name+"/status", node)
}

func podOnNode(c *tclient, ns, name, node string) {
	p := pod(name, "app")
	p["spec"].(map[string]any)["nodeName"] = node
	c.must(201, "POST", "/api/v1/namespaces/"+ns+"/pods", p)
}

// TestConnectAdmission: exec, attach and portforward are CONNECTs that
// admission sees, with their options as the object, before the pod is
// even read (kube-apiserver's ConnectResource).
func TestConnectAdmission(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	kubelet := startFakeKubelet(t)
	connectNode(t, c, kubelet, "node-c")
	hook := startTestWebhook(t, "")

	t.Run("policy denies CONNECT pods/exec", func(t *testing.T) {
		scenarioNamespace(c, "connect-vap")
		podOnNode(c, "connect-vap", "web", "node-c")
		createCached(t, s, c, vapPath, "validatingadmissionpolicies", map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
			"metadata": map[string]any{"name": "no-shells"},
			"spec": map[string]any{
				"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
					"operations": []string{"CONNECT"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"pods/exec"}}}},
				"validations": []any{map[string]any{"expression": "object.kind == 'PodExecOptions' && object.command[0] != 'sh'",
					"message": "no shells", "reason": "Forbidden"}},
			}})
		createCached(t, s, c, vapbPath, "validatingadmissionpolicybindings",
			bindingInScenario("no-shells-binding", "no-shells", "connect-vap", []string{"Deny"}, nil))

		want := `pods "web" is forbidden: ValidatingAdmissionPolicy 'no-shells' with binding 'no-shells-binding' denied request: no shells`
		for _, method := range []string{"POST", "GET"} {
			r := c.do(method, "/api/v1/namespaces/connect-vap/pods/web/exec?command=sh&stdin=true&stdout=true", nil, "")
			st := r.obj(t)
			if r.Code != 403 || st["reason"] != "Forbidden" || st["message"] != want {
				t.Errorf("%s exec sh = %d %s\nwant 403 Forbidden %q", method, r.Code, r.Body, want)
			}
		}
		// Admission comes before the pod is read: a pod that does not
		// exist is refused the same way.
		r := c.do("POST", "/api/v1/namespaces/connect-vap/pods/ghost/exec?command=sh", nil, "")
		if r.Code != 403 || r.obj(t)["message"] != `pods "ghost" is forbidden: ValidatingAdmissionPolicy 'no-shells' with binding 'no-shells-binding' denied request: no shells` {
			t.Errorf("exec sh in a missing pod = %d %s", r.Code, r.Body)
		}
		if got := kubelet.asked(); len(got) != 0 {
			t.Fatalf("the kubelet was asked %v", got)
		}
		// An admitted exec goes on to the kubelet, with the options
		// admission saw.
		r = c.do("POST", "/api/v1/namespaces/connect-vap/pods/web/exec?command=ls&command=-l&stdout=1&stdin=false", nil, "")
		if r.Code != 200 || string(r.Body) != "reached the kubelet" {
			t.Fatalf("exec ls = %d %s", r.Code, r.Body)
		}
		if got, want := kubelet.asked(), []string{"/exec/connect-vap/web/app?command=ls&command=-l&stdout=true"}; !reflect.DeepEqual(got, want) {
			t.Errorf("the kubelet was asked %q, want %q", got, want)
		}
		// Attach is another subresource: the policy does not match it.
		if r := c.do("POST", "/api/v1/namespaces/connect-vap/pods/web/attach?stdout=true", nil, ""); r.Code != 200 {
			t.Errorf("attach = %d %s", r.Code, r.Body)
		}
	})

	t.Run("webhook receives CONNECT and denies", func(t *testing.T) {
		scenarioNamespace(c, "connect-hook")
		podOnNode(c, "connect-hook", "web", "node-c")
		before := len(kubelet.asked())
		createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", "connect", hook.srv.URL+"/deny", hook.ca.pem, "connect-hook",
			map[string]any{"rules": []any{map[string]any{"operations": []string{"CONNECT"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"},
				"resources": []string{"pods/exec", "pods/attach", "pods/portforward"}}}}))
		tests := []struct {
			sub, query, kind string
			object           string
		}{
			{"exec", "command=ls&command=-l&stdin=true&stdout=true&tty=0&container=app", "PodExecOptions",
				`{"kind":"PodExecOptions","apiVersion":"v1","stdin":true,"stdout":true,"container":"app","command":["ls","-l"]}`},
			{"attach", "stdin=true&stderr=true", "PodAttachOptions",
				`{"kind":"PodAttachOptions","apiVersion":"v1","stdin":true,"stderr":true}`},
			{"portforward", "ports=8080,9090", "PodPortForwardOptions",
				`{"kind":"PodPortForwardOptions","apiVersion":"v1","ports":[8080,9090]}`},
		}
		for _, tt := range tests {
			calls := hook.count("/deny")
			r := c.do("POST", "/api/v1/namespaces/connect-hook/pods/web/"+tt.sub+"?"+tt.query, nil, "")
			st := r.obj(t)
			want := `admission webhook "connect.example.com" denied the request: no thanks`
			if r.Code != 403 || st["reason"] != "Forbidden" || st["message"] != want {
				t.Errorf("%s = %d %s\nwant 403 Forbidden %q", tt.sub, r.Code, r.Body, want)
			}
			if hook.count("/deny") != calls+1 {
				t.Fatalf("%s: the webhook was called %d times, want 1", tt.sub, hook.count("/deny")-calls)
			}
			hook.mu.Lock()
			req := hook.last["/deny"]
			hook.mu.Unlock()
			if req.Operation != "CONNECT" || req.Kind.Kind != tt.kind || req.Kind.Version != "v1" || req.Kind.Group != "" ||
				req.Resource.Resource != "pods" || req.SubResource != tt.sub || req.RequestSubResource != tt.sub ||
				req.Name != "web" || req.Namespace != "connect-hook" || req.OldObject.Raw != nil && string(req.OldObject.Raw) != "null" {
				data, _ := json.Marshal(req)
				t.Errorf("%s: the webhook received %s", tt.sub, data)
			}
			var got, want2 map[string]any
			_ = json.Unmarshal(req.Object.Raw, &got)
			_ = json.Unmarshal([]byte(tt.object), &want2)
			if !reflect.DeepEqual(got, want2) {
				t.Errorf("%s: request.object = %s, want %s", tt.sub, req.Object.Raw, tt.object)
			}
		}
		if got := kubelet.asked(); len(got) != before {
			t.Errorf("the kubelet was asked %v after the webhook's refusals", got[before:])
		}
		// Outside the webhook's namespaces the CONNECT proceeds.
		if r := c.do("POST", "/api/v1/namespaces/connect-vap/pods/web/attach?stdout=true", nil, ""); r.Code != 200 {
			t.Errorf("attach elsewhere = %d %s", r.Code, r.Body)
		}
	})

	t.Run("dryRun is not supported", func(t *testing.T) {
		r := c.do("POST", "/api/v1/namespaces/connect-vap/pods/web/exec?command=ls&dryRun=All", nil, "")
		if r.Code != 400 || r.obj(t)["message"] != "dryRun is not supported" {
			t.Errorf("exec dryRun = %d %s", r.Code, r.Body)
		}
	})
}
