package aggregator_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/aggregator/aggregatortest"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/internal/pki"
)

// seen is what the backend saw of the last proxied request.
type seen struct {
	mu                   sync.Mutex
	user, auth, clientCN string
	groups               []string
}

// TestAggregation registers a test extension apiserver and checks the
// aggregator end to end: Local APIServices for the built-in groups, the
// remote one Available after the discovery check, the group in /apis,
// requests proxied with the front-proxy certificate and the user's
// headers, the real kubectl's table, and each way of being unavailable
// with kube-aggregator's reason.
func TestAggregation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)

	// The request-header settings are published for extension apiservers.
	cm, err := client.Resource[api.ConfigMap](c).Namespace("kube-system").Get(ctx, "extension-apiserver-authentication")
	if err != nil {
		t.Fatal(err)
	}
	frontCAs := x509.NewCertPool()
	if !frontCAs.AppendCertsFromPEM([]byte(cm.Data["requestheader-client-ca-file"])) {
		t.Fatalf("no request-header CA published: %v", cm.Data)
	}
	for k, want := range map[string]string{"requestheader-allowed-names": `["front-proxy-client"]`,
		"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`} {
		if cm.Data[k] != want {
			t.Errorf("%s = %q, want %q", k, cm.Data[k], want)
		}
	}

	var got seen
	backend := aggregatortest.Start(t, ctx, c, aggregatortest.Options{Group: "wardle.example.com", Version: "v1alpha1", ClientCAs: frontCAs,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got.mu.Lock()
			got.user, got.groups, got.auth = r.Header.Get("X-Remote-User"), r.Header.Values("X-Remote-Group"), r.Header.Get("Authorization")
			got.clientCN = ""
			if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
				got.clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
			}
			got.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/apis/wardle.example.com/v1alpha1":
				fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"wardle.example.com/v1alpha1","resources":[{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get","list"]}]}`)
			case "/apis":
				// The aggregated document, as extension apiservers built
				// on k8s.io/apiserver serve it; it also lists a group the
				// APIService does not name, which stays out.
				w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
				fmt.Fprint(w, `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[`+
					`{"metadata":{"name":"wardle.example.com"},"versions":[{"version":"v1alpha1","resources":[`+
					`{"resource":"flunders","responseKind":{"group":"","version":"","kind":"Flunder"},"scope":"Namespaced","singularResource":"flunder","verbs":["get","list"]},`+
					`{"resource":"fischers","scope":"Cluster","singularResource":"fischer","verbs":["get"]}],"freshness":"Current"}]},`+
					`{"metadata":{"name":"other.example.com"},"versions":[{"version":"v1","freshness":"Current"}]}]}`)
			case "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders":
				fmt.Fprintf(w, `{"kind":"FlunderList","apiVersion":"wardle.example.com/v1alpha1","metadata":{},"items":[],"query":%q}`, r.URL.RawQuery)
			default:
				http.NotFound(w, r)
			}
		})})
	cond := aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionTrue, "Passed")
	if cond.Message != "all checks passed" || cond.LastTransitionTime.IsZero() {
		t.Errorf("available condition %+v", cond)
	}

	// client-go's apiregistration clientset, in protobuf as typed clients
	// prefer.
	rc, err := clientcmd.BuildConfigFromFlags("", s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.ContentType, rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"
	typed, err := aggregatorclient.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	typedSvc, err := typed.ApiregistrationV1().APIServices().Get(ctx, backend.Name, metav1.GetOptions{})
	if err != nil || typedSvc.Spec.Service == nil || typedSvc.Spec.Service.Name != "test-extension" || *typedSvc.Spec.Service.Port != 443 ||
		len(typedSvc.Status.Conditions) != 1 || typedSvc.Status.Conditions[0].Reason != "Passed" {
		t.Errorf("APIService through client-go's protobuf: %v %+v", err, typedSvc)
	}

	// The built-in groups are Local APIServices with kube's priorities.
	// As kube's, the aggregator's own group has none.
	if _, err := client.Resource[api.APIService](c).Get(ctx, "v1.apiregistration.k8s.io"); !apierrors.IsNotFound(err) {
		t.Errorf("APIService v1.apiregistration.k8s.io: %v, want NotFound", err)
	}
	for name, prio := range map[string][2]int32{"v1.": {18000, 1}, "v1.apps": {17800, 15}, "v2.autoscaling": {17500, 30}, "v1.scheduling.k8s.io": {16600, 15}} {
		ls, err := client.Resource[api.APIService](c).Get(ctx, name)
		if err != nil {
			t.Errorf("local APIService %s: %v", name, err)
			continue
		}
		if ls.Spec.Service != nil || ls.Spec.GroupPriorityMinimum != prio[0] || ls.Spec.VersionPriority != prio[1] {
			t.Errorf("%s spec %+v", name, ls.Spec)
		}
		aggregatortest.WaitCondition(t, ctx, c, name, api.ConditionTrue, "Local")
	}

	// Discovery lists the group; its document comes from the backend.
	b, err := c.Do(ctx, client.Request{Path: "/apis"})
	if err != nil || !strings.Contains(string(b), `{"name":"wardle.example.com","versions":[{"groupVersion":"wardle.example.com/v1alpha1","version":"v1alpha1"}],"preferredVersion":{"groupVersion":"wardle.example.com/v1alpha1","version":"v1alpha1"}}`) {
		t.Errorf("/apis: %v %s", err, b)
	}
	if b, err := c.Do(ctx, client.Request{Path: "/apis/wardle.example.com"}); err != nil || !strings.Contains(string(b), `"kind":"APIGroup"`) {
		t.Errorf("/apis/wardle.example.com: %v %s", err, b)
	}
	if b, err := c.Do(ctx, client.Request{Path: "/apis/wardle.example.com/v1alpha1"}); err != nil || !strings.Contains(string(b), `"flunders"`) {
		t.Errorf("proxied discovery: %v %s", err, b)
	}

	// Aggregated discovery lists the group version as the backend's own
	// document has it (a missing responseKind made empty, as
	// kube-aggregator does), Current.
	const wardleV2 = `{"metadata":{"name":"wardle.example.com"},"versions":[{"version":"v1alpha1","resources":[` +
		`{"resource":"flunders","responseKind":{"group":"","version":"","kind":"Flunder"},"scope":"Namespaced","singularResource":"flunder","verbs":["get","list"]},` +
		`{"resource":"fischers","responseKind":{"group":"","version":"","kind":""},"scope":"Cluster","singularResource":"fischer","verbs":["get"]}],"freshness":"Current"}]}`
	waitV2 := func(want string) {
		t.Helper()
		var b []byte
		for ctx.Err() == nil {
			b, err = c.Do(ctx, client.Request{Path: "/apis", Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
			if err == nil && strings.Contains(string(b), want) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("aggregated /apis never held %s: %v %s", want, err, b)
	}
	waitV2(wardleV2)
	if strings.Contains(string(b), "other.example.com") {
		t.Errorf("/apis lists a group no APIService names")
	}

	// A request is proxied with the front-proxy certificate and the user.
	b, err = c.Do(ctx, client.Request{Path: "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", Query: map[string][]string{"limit": {"5"}}})
	if err != nil || !strings.Contains(string(b), `"query":"limit=5"`) {
		t.Fatalf("proxied list: %v %s", err, b)
	}
	got.mu.Lock()
	if got.user != pki.AdminUser || !containsAll(got.groups, "system:masters", "system:authenticated") || got.auth != "" || got.clientCN != pki.FrontProxyClientUser {
		t.Errorf("backend saw user %q groups %q authorization %q client certificate %q", got.user, got.groups, got.auth, got.clientCN)
	}
	got.mu.Unlock()

	// The real kubectl's table.
	kubectl := oracle.Path(t, "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "get", "apiservices", backend.Name, "v1.apps").CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME SERVICE AVAILABLE AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), backend.Name+" kube-system/test-extension True ") ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[2]), " "), "v1.apps Local True ") {
		t.Errorf("kubectl get apiservices: %v\n%s", err, out)
	}

	// Validation, with kube-aggregator's messages.
	_, err = client.Resource[api.APIService](c).Create(ctx, &api.APIService{ObjectMeta: api.ObjectMeta{Name: "v1.wrong.example.com"},
		Spec: api.APIServiceSpec{Group: "example.com", Version: "v1", GroupPriorityMinimum: 0, VersionPriority: 10, CABundle: []byte("x")}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.name: Invalid value: \"v1.wrong.example.com\": must be `spec.version+\".\"+spec.group`: \"v1.example.com\"") ||
		!strings.Contains(err.Error(), "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000") ||
		!strings.Contains(err.Error(), "local APIServices may not have a caBundle") {
		t.Errorf("invalid APIService: %v", err)
	}

	// No endpoints: MissingEndpoints, and requests get 503.
	slices := client.Resource[api.EndpointSlice](c).Namespace("kube-system")
	es, err := slices.Get(ctx, "test-extension-test")
	if err != nil {
		t.Fatal(err)
	}
	es.Endpoints = nil
	if _, err := slices.Update(ctx, es); err != nil {
		t.Fatal(err)
	}
	cond = aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionFalse, "MissingEndpoints")
	if cond.Message != `endpointslices for service/test-extension in "kube-system" have no addresses with port name "https"` {
		t.Errorf("MissingEndpoints message %q", cond.Message)
	}
	_, err = c.Do(ctx, client.Request{Path: "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.Status().Code != http.StatusServiceUnavailable {
		t.Errorf("request while unavailable: %v", err)
	}
	// The group is Stale, without resources, and kubectl's api-resources
	// says nothing of it and succeeds, as with kube-apiserver.
	waitV2(`{"metadata":{"name":"wardle.example.com"},"versions":[{"version":"v1alpha1","freshness":"Stale"}]}`)
	out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "--cache-dir", t.TempDir(), "api-resources").CombinedOutput()
	if err != nil || strings.Contains(string(out), "wardle") || !strings.Contains(string(out), "deployments") {
		t.Errorf("kubectl api-resources with a Stale group: %v\n%s", err, out)
	}
	if err := slices.Delete(ctx, "test-extension-test", nil); err != nil {
		t.Fatal(err)
	}
	aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionFalse, "EndpointsNotFound")

	// Endpoints back but a CA bundle that does not match: the discovery
	// check fails on the certificate.
	name, ready, port := "https", true, int32(backend.Port)
	if _, err := slices.Create(ctx, &api.EndpointSlice{ObjectMeta: api.ObjectMeta{Name: "test-extension-2", Labels: map[string]string{api.LabelServiceName: "test-extension"}},
		AddressType: api.AddressTypeIPv4, Endpoints: []api.Endpoint{{Addresses: []string{backend.IP}, Conditions: api.EndpointConditions{Ready: &ready}}},
		Ports: []api.EndpointSlicePort{{Name: &name, Port: &port}}}); err != nil {
		t.Fatal(err)
	}
	aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionTrue, "Passed")
	other, err := pki.NewCA("other", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	as, err := client.Resource[api.APIService](c).Get(ctx, backend.Name)
	if err != nil {
		t.Fatal(err)
	}
	as.Spec.CABundle = other.CertPEM()
	if _, err := client.Resource[api.APIService](c).Update(ctx, as); err != nil {
		t.Fatal(err)
	}
	cond = aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionFalse, "FailedDiscoveryCheck")
	if !strings.Contains(cond.Message, "failing or missing response from https://"+backend.IP+":") || !strings.Contains(cond.Message, "certificate") {
		t.Errorf("FailedDiscoveryCheck message %q", cond.Message)
	}

	// No service: ServiceNotFound.
	if err := client.Resource[api.Service](c).Namespace("kube-system").Delete(ctx, "test-extension", nil); err != nil {
		t.Fatal(err)
	}
	cond = aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionFalse, "ServiceNotFound")
	if cond.Message != `service/test-extension in "kube-system" is not present` {
		t.Errorf("ServiceNotFound message %q", cond.Message)
	}
	out, _ = exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "get", "apiservice", backend.Name, "--no-headers").CombinedOutput()
	if f := strings.Fields(string(out)); len(f) < 3 || f[2] != "False" || f[3] != "(ServiceNotFound)" {
		t.Errorf("kubectl get apiservice while unavailable: %s", out)
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
