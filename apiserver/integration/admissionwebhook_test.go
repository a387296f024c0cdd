package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// webhookCA is a CA made for one test and a serving certificate it signed
// for 127.0.0.1 and the Service name hook.NAMESPACE.svc.
type webhookCA struct {
	pem  []byte
	cert tls.Certificate
}

func newWebhookCA(t testing.TB, dnsNames ...string) webhookCA {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: dnsNames}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return webhookCA{
		pem:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
	}
}

// testWebhook is an HTTPS admission webhook server. Its paths:
// /mutate adds the label mutated=COUNT, /label-b adds b=yes, /deny refuses
// with code 403, /warn admits with a warning, /hang never answers in time,
// /garbage answers what is not an AdmissionReview.
type testWebhook struct {
	srv   *httptest.Server
	ca    webhookCA
	mu    sync.Mutex
	calls map[string]int
	last  map[string]*admissionv1.AdmissionRequest
}

func startTestWebhook(t testing.TB, listen string, dnsNames ...string) *testWebhook {
	t.Helper()
	w := &testWebhook{ca: newWebhookCA(t, dnsNames...), calls: map[string]int{}, last: map[string]*admissionv1.AdmissionRequest{}}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	if listen != "" {
		l, err := net.Listen("tcp", listen)
		if err != nil {
			t.Fatal(err)
		}
		w.srv.Listener.Close()
		w.srv.Listener = l
	}
	w.srv.TLS = &tls.Config{Certificates: []tls.Certificate{w.ca.cert}}
	w.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes the CA test fails on purpose
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	return w
}

func (w *testWebhook) count(path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[path]
}

func (w *testWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "bad review", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.calls[r.URL.Path]++
	n := w.calls[r.URL.Path]
	w.last[r.URL.Path] = review.Request
	w.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	jsonPatch := admissionv1.PatchTypeJSONPatch
	switch r.URL.Path {
	case "/mutate", "/label-b":
		key, value := "mutated", strconv.Itoa(n)
		if r.URL.Path == "/label-b" {
			key, value = "b", "yes"
		}
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(review.Request.Object.Raw, &obj)
		var ops []map[string]any
		if obj.Metadata.Labels == nil {
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{}})
		}
		if obj.Metadata.Labels[key] == "" || key == "mutated" {
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/" + key, "value": value})
		}
		resp.Patch, _ = json.Marshal(ops)
		resp.PatchType = &jsonPatch
	case "/amplify":
		resp.Patch = []byte(doublingCopies(22))
		resp.PatchType = &jsonPatch
	case "/move":
		resp.Patch = []byte(`[{"op":"replace","path":"/metadata/namespace","value":"elsewhere"},{"op":"replace","path":"/metadata/uid","value":"forged"}]`)
		resp.PatchType = &jsonPatch
	case "/deny":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: 403, Message: "no thanks", Reason: metav1.StatusReasonForbidden}
		resp.Warnings = []string{"denied by the test"}
	case "/warn":
		resp.Warnings = []string{`careful: "quoted"`}
	case "/hang":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	case "/garbage":
		_, _ = rw.Write([]byte("this is not an AdmissionReview"))
		return
	}
	review.Response = resp
	review.Request = nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&review)
}

// webhookConfig is a Mutating- or ValidatingWebhookConfiguration of one
// webhook at url for CREATE of configmaps in namespaces labelled
// scenario=SCENARIO.
func webhookConfig(kind, name, url string, ca []byte, scenario string, extra map[string]any) map[string]any {
	hook := map[string]any{
		"name":                    name + ".example.com",
		"clientConfig":            map[string]any{"url": url, "caBundle": ca},
		"rules":                   []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}},
		"sideEffects":             "None",
		"admissionReviewVersions": []string{"v1"},
		"namespaceSelector":       map[string]any{"matchLabels": map[string]string{"scenario": scenario}},
	}
	for k, v := range extra {
		hook[k] = v
	}
	return map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name}, "webhooks": []any{hook}}
}

const (
	mwcPath = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
	vwcPath = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
)

// createWebhookConfig creates a configuration and waits until the watch
// cache, which admission reads, has it.
func createWebhookConfig(t *testing.T, s *apiservertest.Server, c *tclient, cfg map[string]any) {
	t.Helper()
	path, resource := vwcPath, "validatingwebhookconfigurations"
	if cfg["kind"] == "MutatingWebhookConfiguration" {
		path, resource = mwcPath, "mutatingwebhookconfigurations"
	}
	c.must(201, "POST", path, cfg)
	name := cfg["metadata"].(map[string]any)["name"].(string)
	st := s.Store("admissionregistration.k8s.io", resource)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := st.Cacher().Get(st.Key("", name)); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s not in the watch cache after 5s", resource, name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hostIPv4 is a non-loopback IPv4 address of this host.
func hostIPv4(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatal("this host has no non-loopback IPv4 address to serve a Service's endpoint on")
	return ""
}

func scenarioNamespace(c *tclient, name string) {
	c.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": name,
		"labels": map[string]string{"scenario": name}}})
}

func TestAdmissionWebhooks(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	hook := startTestWebhook(t, "")
	other := newWebhookCA(t) // signs nothing the webhook serves

	t.Run("mutation applied, objectSelector", func(t *testing.T) {
		scenarioNamespace(c, "mutate")
		createWebhookConfig(t, s, c, webhookConfig("MutatingWebhookConfiguration", "mutate", hook.srv.URL+"/mutate", hook.ca.pem, "mutate",
			map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]string{"webhook": "on"}}}))
		got := c.must(201, "POST", "/api/v1/namespaces/mutate/configmaps", configMap("a", map[string]string{"webhook": "on"}, nil))
		if l := meta(got)["labels"].(map[string]any); l["mutated"] != "1" {
			t.Errorf("labels after the mutating webhook = %v, want mutated=1", l)
		}
		got = c.must(201, "POST", "/api/v1/namespaces/mutate/configmaps", configMap("b", map[string]string{"webhook": "off"}, nil))
		if l := meta(got)["labels"].(map[string]any); l["mutated"] != nil {
			t.Errorf("object the selector leaves out was mutated: %v", l)
		}
		stored := c.must(200, "GET", "/api/v1/namespaces/mutate/configmaps/a", nil)
		if meta(stored)["labels"].(map[string]any)["mutated"] != "1" {
			t.Errorf("the mutation was not stored: %v", meta(stored))
		}
		hook.mu.Lock()
		req := hook.last["/mutate"]
		hook.mu.Unlock()
		if req.Kind.Kind != "ConfigMap" || req.Resource.Resource != "configmaps" || req.Namespace != "mutate" ||
			req.Operation != admissionv1.Create || req.UserInfo.Username == "" || req.DryRun == nil || *req.DryRun {
			t.Errorf("AdmissionRequest = %+v", req)
		}
	})

	t.Run("a webhook's patch is held to the copy limit", func(t *testing.T) {
		// kube-apiserver's answer: the patch library's error as a 500,
		// whatever the failure policy (it is not a failure to call).
		scenarioNamespace(c, "amplify")
		createWebhookConfig(t, s, c, webhookConfig("MutatingWebhookConfiguration", "amplify", hook.srv.URL+"/amplify", hook.ca.pem, "amplify", nil))
		r := c.do("POST", "/api/v1/namespaces/amplify/configmaps", configMap("a", nil, nil), "")
		const want = "Internal error occurred: Unable to complete the copy, the accumulated size increase of copy is 3276758, exceeding the limit 3145728"
		if st := r.obj(t); r.Code != 500 || st["reason"] != "InternalError" || st["message"] != want {
			t.Errorf("create through the amplifying webhook = %d %.500s, want 500 %q", r.Code, r.Body, want)
		}
		if r := c.do("GET", "/api/v1/namespaces/amplify/configmaps/a", nil, ""); r.Code != 404 {
			t.Errorf("the refused ConfigMap: GET = %d %.300s", r.Code, r.Body)
		}
	})

	t.Run("denial with the webhook's code and message, namespaceSelector", func(t *testing.T) {
		scenarioNamespace(c, "deny")
		createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", "deny", hook.srv.URL+"/deny", hook.ca.pem, "deny", nil))
		r := c.do("POST", "/api/v1/namespaces/deny/configmaps", configMap("x", nil, nil), "")
		st := r.obj(t)
		if r.Code != 403 || st["kind"] != "Status" || st["reason"] != "Forbidden" ||
			st["message"] != `admission webhook "deny.example.com" denied the request: no thanks` {
			t.Errorf("denied create = %d %s", r.Code, r.Body)
		}
		// Another namespace is not selected.
		c.must(201, "POST", "/api/v1/namespaces/default/configmaps", configMap("not-denied", nil, nil))
	})

	t.Run("matchConditions", func(t *testing.T) {
		scenarioNamespace(c, "conditions")
		createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", "conditions", hook.srv.URL+"/deny", hook.ca.pem, "conditions",
			map[string]any{"matchConditions": []any{map[string]any{"name": "not-exempt", "expression": "object.metadata.name != 'exempt'"}}}))
		c.must(201, "POST", "/api/v1/namespaces/conditions/configmaps", configMap("exempt", nil, nil))
		if r := c.do("POST", "/api/v1/namespaces/conditions/configmaps", configMap("other", nil, nil), ""); r.Code != 403 {
			t.Errorf("create the condition matches = %d %s, want 403", r.Code, r.Body)
		}
		bad := webhookConfig("ValidatingWebhookConfiguration", "bad-condition", hook.srv.URL+"/deny", hook.ca.pem, "none",
			map[string]any{"matchConditions": []any{map[string]any{"name": "c", "expression": "object.metadata.name"}}})
		r := c.do("POST", vwcPath, bad, "")
		if r.Code != 422 || !strings.Contains(string(r.Body), `webhooks[0].matchConditions[0].expression: Invalid value: \"object.metadata.name\": must evaluate to bool`) {
			t.Errorf("matchCondition that is not a bool = %d %s", r.Code, r.Body)
		}
	})

	t.Run("delete refused, a patch may not move the object", func(t *testing.T) {
		scenarioNamespace(c, "deletes")
		c.must(201, "POST", "/api/v1/namespaces/deletes/configmaps", configMap("kept", nil, nil))
		cfg := webhookConfig("ValidatingWebhookConfiguration", "no-deletes", hook.srv.URL+"/deny", hook.ca.pem, "deletes", nil)
		cfg["webhooks"].([]any)[0].(map[string]any)["rules"].([]any)[0].(map[string]any)["operations"] = []string{"DELETE"}
		createWebhookConfig(t, s, c, cfg)
		if r := c.do("DELETE", "/api/v1/namespaces/deletes/configmaps/kept", nil, ""); r.Code != 403 {
			t.Errorf("delete = %d %s, want 403", r.Code, r.Body)
		}
		hook.mu.Lock()
		req := hook.last["/deny"]
		hook.mu.Unlock()
		if req.Operation != admissionv1.Delete || req.Name != "kept" || len(req.Object.Raw) != 0 || !strings.Contains(string(req.OldObject.Raw), `"name":"kept"`) ||
			!strings.Contains(string(req.Options.Raw), `"kind":"DeleteOptions"`) {
			t.Errorf("DELETE AdmissionRequest: %+v", req)
		}
		c.must(200, "GET", "/api/v1/namespaces/deletes/configmaps/kept", nil)

		move := webhookConfig("MutatingWebhookConfiguration", "move", hook.srv.URL+"/move", hook.ca.pem, "deletes", nil)
		createWebhookConfig(t, s, c, move)
		r := c.do("POST", "/api/v1/namespaces/deletes/configmaps", configMap("moved", nil, nil), "")
		if r.Code != 400 || !strings.Contains(string(r.Body), "the namespace of the provided object does not match the namespace sent on the request") {
			t.Errorf("create a webhook moves = %d %s", r.Code, r.Body)
		}
	})

	t.Run("warnings become Warning headers", func(t *testing.T) {
		scenarioNamespace(c, "warn")
		createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", "warn", hook.srv.URL+"/warn", hook.ca.pem, "warn", nil))
		body, _ := json.Marshal(configMap("w", nil, nil))
		resp, err := http.Post(s.URL()+"/api/v1/namespaces/warn/configmaps", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Values("Warning"); resp.StatusCode != 201 || len(got) != 1 || got[0] != `299 - "careful: \"quoted\""` {
			t.Errorf("status %d, Warning headers %q", resp.StatusCode, got)
		}
	})

	for _, tc := range []struct {
		path, policy string
		wantCode     int
		wantMessage  []string
	}{
		{"/hang", "Fail", 500, []string{`Internal error occurred: failed calling webhook "hang-fail.example.com": failed to call webhook: Post "` + hook.srv.URL + `/hang?timeout=1s": context deadline exceeded`}},
		{"/hang", "Ignore", 201, nil},
		{"/garbage", "Fail", 500, []string{`failed calling webhook "garbage-fail.example.com": failed to call webhook: couldn't decode the webhook response`}},
		{"/garbage", "Ignore", 201, nil},
	} {
		name := strings.TrimPrefix(tc.path, "/") + "-" + strings.ToLower(tc.policy)
		t.Run(name, func(t *testing.T) {
			scenarioNamespace(c, name)
			createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", name, hook.srv.URL+tc.path, hook.ca.pem, name,
				map[string]any{"failurePolicy": tc.policy, "timeoutSeconds": 1}))
			start := time.Now()
			r := c.do("POST", "/api/v1/namespaces/"+name+"/configmaps", configMap("x", nil, nil), "")
			took := time.Since(start)
			if r.Code != tc.wantCode {
				t.Fatalf("create = %d %s, want %d", r.Code, r.Body, tc.wantCode)
			}
			for _, m := range tc.wantMessage {
				if !strings.Contains(string(r.Body), strings.ReplaceAll(m, `"`, `\"`)) {
					t.Errorf("answer %s\nlacks %s", r.Body, m)
				}
			}
			// The 1 s timeout bounds the request (not the webhook's 10 s hang).
			if took > 3*time.Second || tc.path == "/hang" && took < 900*time.Millisecond {
				t.Errorf("the request took %v with a 1s webhook timeout", took)
			}
		})
	}

	t.Run("CA bundle checked", func(t *testing.T) {
		scenarioNamespace(c, "wrong-ca")
		createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", "wrong-ca", hook.srv.URL+"/warn", other.pem, "wrong-ca", nil))
		r := c.do("POST", "/api/v1/namespaces/wrong-ca/configmaps", configMap("x", nil, nil), "")
		if r.Code != 500 || !strings.Contains(string(r.Body), "x509: certificate signed by unknown authority") {
			t.Errorf("create through a webhook with a foreign certificate = %d %s", r.Code, r.Body)
		}
	})

	t.Run("reinvocation IfNeeded", func(t *testing.T) {
		scenarioNamespace(c, "reinvoke")
		before := hook.count("/mutate")
		createWebhookConfig(t, s, c, webhookConfig("MutatingWebhookConfiguration", "reinvoke-a", hook.srv.URL+"/mutate", hook.ca.pem, "reinvoke",
			map[string]any{"reinvocationPolicy": "IfNeeded", "objectSelector": map[string]any{"matchLabels": map[string]string{"webhook": "twice"}}}))
		createWebhookConfig(t, s, c, webhookConfig("MutatingWebhookConfiguration", "reinvoke-b", hook.srv.URL+"/label-b", hook.ca.pem, "reinvoke", nil))
		got := c.must(201, "POST", "/api/v1/namespaces/reinvoke/configmaps", configMap("x", map[string]string{"webhook": "twice"}, nil))
		l := meta(got)["labels"].(map[string]any)
		if n := hook.count("/mutate") - before; n != 2 || l["b"] != "yes" || l["mutated"] == nil {
			t.Errorf("IfNeeded webhook called %d times (want 2: b changed the object after it), labels %v", n, l)
		}
	})

	t.Run("dry run sent to a NoneOnDryRun webhook", func(t *testing.T) {
		scenarioNamespace(c, "dry")
		createWebhookConfig(t, s, c, webhookConfig("ValidatingWebhookConfiguration", "dry", hook.srv.URL+"/warn", hook.ca.pem, "dry",
			map[string]any{"sideEffects": "NoneOnDryRun"}))
		c.must(201, "POST", "/api/v1/namespaces/dry/configmaps?dryRun=All", configMap("x", nil, nil))
		hook.mu.Lock()
		req := hook.last["/warn"]
		hook.mu.Unlock()
		if req.Namespace != "dry" || req.DryRun == nil || !*req.DryRun || !strings.Contains(string(req.Options.Raw), `"dryRun":["All"]`) {
			t.Errorf("dry-run AdmissionRequest: namespace %q dryRun %v options %s", req.Namespace, req.DryRun, req.Options.Raw)
		}
		// A configuration is exempt from webhooks: always writable.
		c.must(200, "DELETE", vwcPath+"/dry", nil)
	})

	t.Run("service reference resolved through its endpoints", func(t *testing.T) {
		scenarioNamespace(c, "webhooks")
		// Endpoints may not be loopback addresses: the webhook listens on
		// one of the host's others, its certificate names the Service.
		ip := hostIPv4(t)
		hook := startTestWebhook(t, ip+":0", "hook.webhooks.svc")
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(hook.srv.URL, "https://"))
		p, _ := strconv.Atoi(port)
		c.must(201, "POST", "/api/v1/namespaces/webhooks/services", map[string]any{"metadata": map[string]any{"name": "hook"},
			"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443, "targetPort": p}}}})
		c.must(201, "POST", "/apis/discovery.k8s.io/v1/namespaces/webhooks/endpointslices", map[string]any{
			"metadata":    map[string]any{"name": "hook-1", "labels": map[string]string{"kubernetes.io/service-name": "hook"}},
			"addressType": "IPv4",
			"endpoints":   []any{map[string]any{"addresses": []string{ip}, "conditions": map[string]any{"ready": true}}},
			"ports":       []any{map[string]any{"name": "https", "port": p, "protocol": "TCP"}},
		})
		cfg := webhookConfig("ValidatingWebhookConfiguration", "by-service", "", hook.ca.pem, "webhooks", nil)
		cfg["webhooks"].([]any)[0].(map[string]any)["clientConfig"] = map[string]any{
			"service": map[string]any{"namespace": "webhooks", "name": "hook", "path": "/deny"}, "caBundle": hook.ca.pem}
		createWebhookConfig(t, s, c, cfg)
		r := c.do("POST", "/api/v1/namespaces/webhooks/configmaps", configMap("x", nil, nil), "")
		if r.Code != 403 || !strings.Contains(string(r.Body), `admission webhook \"by-service.example.com\" denied the request: no thanks`) {
			t.Errorf("create through a Service webhook = %d %s", r.Code, r.Body)
		}

		// Without endpoints the call fails as kube's does: the error names
		// the Service's URL, the address being resolved at dial time.
		c.must(200, "DELETE", "/apis/discovery.k8s.io/v1/namespaces/webhooks/endpointslices/hook-1", nil)
		want := `Internal error occurred: failed calling webhook \"by-service.example.com\": failed to call webhook: Post \"https://hook.webhooks.svc:443/deny?timeout=10s\": no endpoints available for service \"hook\"`
		deadline := time.Now().Add(5 * time.Second)
		for {
			r = c.do("POST", "/api/v1/namespaces/webhooks/configmaps", configMap("y", nil, nil), "")
			if r.Code == 500 && strings.Contains(string(r.Body), want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("create through a Service webhook without endpoints = %d %s, want 500 %s", r.Code, r.Body, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("client-go protobuf", func(t *testing.T) {
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), ContentConfig: rest.ContentConfig{
			ContentType: "application/vnd.kubernetes.protobuf", AcceptContentTypes: "application/vnd.kubernetes.protobuf"}})
		if err != nil {
			t.Fatal(err)
		}
		none := admissionregistrationv1.SideEffectClassNone
		url := hook.srv.URL + "/allow"
		created, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "from-client-go"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "cg.example.com", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				ClientConfig:   admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: hook.ca.pem},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"never": "matches"}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w := created.Webhooks[0]
		if *w.TimeoutSeconds != 10 || *w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy || string(w.ClientConfig.CABundle) != string(hook.ca.pem) {
			t.Errorf("created over protobuf: %+v", w)
		}
		list, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) < 2 {
			t.Errorf("list over protobuf: %v, %d items", err, len(list.Items))
		}
	})

	t.Run("metrics", func(t *testing.T) {
		r := c.do("GET", "/metrics", nil, "")
		for _, want := range []string{
			`apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.example.com",operation="CREATE",rejection_code="403",type="validating"} 1`,
			`apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="hang-fail.example.com",operation="CREATE",rejection_code="0",type="validating"} 1`,
			`apiserver_admission_webhook_fail_open_count{name="hang-ignore.example.com",type="validating"} 1`,
			`apiserver_admission_webhook_admission_duration_seconds_count{name="mutate.example.com",operation="CREATE",rejected="false",type="admit"}`,
		} {
			if r.Code != 200 || !strings.Contains(string(r.Body), want) {
				t.Errorf("/metrics (%d) lacks %s", r.Code, want)
			}
		}
	})

	t.Run("webhook configuration defaults and validation", func(t *testing.T) {
		got := c.must(200, "GET", mwcPath+"/mutate", nil)
		w := got["webhooks"].([]any)[0].(map[string]any)
		if w["failurePolicy"] != "Fail" || w["matchPolicy"] != "Equivalent" || w["timeoutSeconds"] != float64(10) ||
			w["reinvocationPolicy"] != "Never" || w["rules"].([]any)[0].(map[string]any)["scope"] != "*" {
			t.Errorf("defaults = %v", w)
		}
		bad := webhookConfig("ValidatingWebhookConfiguration", "bad", "http://insecure/x", nil, "none", nil)
		delete(bad["webhooks"].([]any)[0].(map[string]any), "sideEffects")
		r := c.do("POST", vwcPath, bad, "")
		if r.Code != 422 || !strings.Contains(string(r.Body), "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun") ||
			!strings.Contains(string(r.Body), "'https' is the only allowed URL scheme") {
			t.Errorf("invalid configuration = %d %s", r.Code, r.Body)
		}
	})
}
