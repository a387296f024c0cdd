package integration

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/pki"
)

// userClientset returns a client-go clientset authenticated by a client
// certificate for user in groups; impersonate, if set, is rest.Config's.
func userClientset(t *testing.T, s *apiservertest.Server, impersonate rest.ImpersonationConfig, user string, groups ...string) *kubernetes.Clientset {
	t.Helper()
	certPEM, keyPEM, err := s.PKI().CA.IssueClient(user, groups, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.SecureURL(), QPS: 100, Burst: 100,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM},
		Impersonate:     impersonate,
		ContentConfig:   rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func ssar(verb, group, resource, ns string) *authorizationv1.SelfSubjectAccessReview {
	return &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: ns}}}
}

// TestReviewAPIs drives the authorization.k8s.io and authentication.k8s.io
// reviews through client-go, as kubectl auth can-i and whoami do, with the
// RBAC that guards every request deciding.
func TestReviewAPIs(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := userClientset(t, s, rest.ImpersonationConfig{}, "alice", "dev")

	// Discovery lists the review kinds, create only.
	rl, err := alice.Discovery().ServerResourcesForGroupVersion("authorization.k8s.io/v1")
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	verbs := map[string]string{}
	for _, r := range rl.APIResources {
		verbs[r.Name] = strings.Join(r.Verbs, ",")
	}
	for _, name := range []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews", "localsubjectaccessreviews"} {
		if verbs[name] != "create" {
			t.Errorf("discovery: %s verbs %q, want create", name, verbs[name])
		}
	}

	// Every authenticated user may ask about themselves (system:basic-user).
	got, err := alice.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar("list", "", "pods", "default"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SSAR: %v", err)
	}
	if got.Status.Allowed {
		t.Errorf("alice may list pods before any binding: %+v", got)
	}
	got, err = alice.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar("create", "authorization.k8s.io", "selfsubjectaccessreviews", ""), metav1.CreateOptions{})
	if err != nil || !got.Status.Allowed {
		t.Fatalf("SSAR of SSAR: %+v %v", got, err)
	}
	if !strings.Contains(got.Status.Reason, `ClusterRoleBinding "system:basic-user"`) {
		t.Errorf("reason %q does not name the binding", got.Status.Reason)
	}
	_, err = alice.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("SSAR without attributes: %v, want Invalid", err)
	}

	// whoami.
	ssr, err := alice.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	if u := ssr.Status.UserInfo; u.Username != "alice" || strings.Join(u.Groups, ",") != "dev,system:authenticated" {
		t.Errorf("whoami = %+v", u)
	}

	// SubjectAccessReview needs create on subjectaccessreviews.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "dev"}}}
	if _, err := alice.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice creating a SubjectAccessReview: %v, want Forbidden", err)
	}
	admin.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "dev"}})
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "alice-edit"},
		"subjects": []any{map[string]any{"kind": "User", "name": "alice"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
	})
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", map[string]any{
		"metadata": map[string]any{"name": "reader"},
		"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get", "list"}}},
	})
	adminCS := userClientset(t, s, rest.ImpersonationConfig{}, "root", "system:masters")
	waitFor(t, 5*time.Second, func() bool {
		out, err := adminCS.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && out.Status.Allowed
	})
	lsar := &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "dev"},
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "dev"}}}
	if out, err := adminCS.AuthorizationV1().LocalSubjectAccessReviews("dev").Create(ctx, lsar, metav1.CreateOptions{}); err != nil || out.Status.Allowed {
		t.Errorf("LocalSubjectAccessReview of delete: %+v %v", out, err)
	}
	lsar.Spec.ResourceAttributes.Namespace = "other"
	if _, err := adminCS.AuthorizationV1().LocalSubjectAccessReviews("dev").Create(ctx, lsar, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("LocalSubjectAccessReview for another namespace: %v, want BadRequest", err)
	}

	// can-i --list: the rules of alice in dev, her RoleBinding's included.
	rules, err := alice.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "dev"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectRulesReview: %v", err)
	}
	var sawPods, sawSSAR bool
	for _, r := range rules.Status.ResourceRules {
		sawPods = sawPods || strings.Join(r.Resources, ",") == "pods" && strings.Join(r.Verbs, ",") == "get,list"
		sawSSAR = sawSSAR || strings.Contains(strings.Join(r.Resources, ","), "selfsubjectaccessreviews")
	}
	if !sawPods || !sawSSAR || len(rules.Status.NonResourceRules) == 0 || rules.Status.Incomplete {
		t.Errorf("rules of alice in dev: %+v", rules.Status)
	}

	// TokenReview: an unknown token is not authenticated; no token is a 400.
	tr, err := adminCS.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: "abcdef.0123456789abcdef"}}, metav1.CreateOptions{})
	if err != nil || tr.Status.Authenticated {
		t.Errorf("TokenReview of an unknown token: %+v %v", tr, err)
	}
	// A bootstrap token is known to the authenticators that guard requests.
	id, secret := pki.GenerateBootstrapToken()
	sec, err := pki.BootstrapTokenSecret(id, secret, time.Hour, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	admin.must(201, "POST", "/api/v1/namespaces/kube-system/secrets", sec)
	tr, err = adminCS.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: id + "." + secret}}, metav1.CreateOptions{})
	if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "system:bootstrap:"+id ||
		!slices.Contains(tr.Status.User.Groups, "system:bootstrappers") || !slices.Contains(tr.Status.User.Groups, "system:authenticated") {
		t.Errorf("TokenReview of a bootstrap token: %+v %v", tr, err)
	}
	if _, err := adminCS.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("TokenReview without a token: %v, want BadRequest", err)
	}
	if r := admin.do("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", nil, ""); r.Code != 405 {
		t.Errorf("GET of a review: %d %s, want 405", r.Code, r.Body)
	}
}

// TestImpersonation checks the Impersonate-* headers through client-go's
// rest.Config.Impersonate: refused without the impersonate verb, in kube's
// words; once granted, the request is the impersonated user's.
func TestImpersonation(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	asBob := userClientset(t, s, rest.ImpersonationConfig{UserName: "bob", Groups: []string{"qa"}}, "alice")
	_, err := asBob.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	want := `users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("impersonation without the verb: %v, want %q", err, want)
	}
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", map[string]any{
		"metadata": map[string]any{"name": "impersonator"},
		"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"users", "groups"}, "verbs": []string{"impersonate"}}},
	})
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
		"metadata": map[string]any{"name": "alice-impersonates"},
		"subjects": []any{map[string]any{"kind": "User", "name": "alice"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "impersonator"},
	})
	var ssr *authenticationv1.SelfSubjectReview
	waitFor(t, 5*time.Second, func() bool {
		ssr, err = asBob.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil
	})
	if u := ssr.Status.UserInfo; u.Username != "bob" || strings.Join(u.Groups, ",") != "qa,system:authenticated" {
		t.Errorf("impersonated whoami = %+v", u)
	}
	// Bob may not list pods, whatever alice may.
	if _, err := asBob.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), `User "bob" cannot list`) {
		t.Errorf("bob listing pods: %v", err)
	}
	// A uid needs its own grant.
	asBobUID := userClientset(t, s, rest.ImpersonationConfig{UserName: "bob", UID: "42"}, "alice")
	if _, err := asBobUID.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), `cannot impersonate resource "uids" in API group "authentication.k8s.io"`) {
		t.Errorf("impersonating a uid: %v", err)
	}
}

// TestEviction evicts pods through client-go's EvictV1, as kubectl drain does.
func TestEviction(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	admin := newClient(t, s)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(),
		ContentConfig: rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin.must(201, "POST", "/api/v1/namespaces/default/pods", pod("victim", "c"))

	ev := func(name string) *policyv1.Eviction {
		return &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	err = cs.CoreV1().Pods("default").EvictV1(ctx, ev("ghost"))
	var se *apierrors.StatusError
	if !apierrors.IsNotFound(err) || !asStatus(err, &se) || se.ErrStatus.Details == nil || se.ErrStatus.Details.Name != "ghost" || se.ErrStatus.Details.Kind != "pods" {
		t.Errorf("evicting a missing pod: %#v", err)
	}
	// The name in the body must be the URL's.
	r := admin.do("POST", "/api/v1/namespaces/default/pods/victim/eviction", map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "other"}}, "")
	if r.Code != 400 || !strings.Contains(string(r.Body), "name in URL does not match name in Eviction object") {
		t.Errorf("mismatched name: %d %s", r.Code, r.Body)
	}
	// DeleteOptions inside: dry run leaves the pod.
	dry := ev("victim")
	dry.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{"All"}}
	if err := cs.CoreV1().Pods("default").EvictV1(ctx, dry); err != nil {
		t.Fatalf("dry-run eviction: %v", err)
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "victim", metav1.GetOptions{}); err != nil {
		t.Fatalf("a dry-run eviction deleted the pod: %v", err)
	}
	r = admin.do("POST", "/api/v1/namespaces/default/pods/victim/eviction", map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "victim"}}, "")
	var st map[string]any
	_ = json.Unmarshal(r.Body, &st)
	if r.Code != 201 || st["kind"] != "Status" || st["status"] != "Success" || st["code"] != float64(201) {
		t.Fatalf("eviction: %d %s", r.Code, r.Body)
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "victim", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("evicted (unbound) pod still there: %v", err)
	}
	// A pod on a node is deleted gracefully, marked as disrupted by the
	// eviction; a stale precondition is a conflict that changes nothing.
	bound := pod("bound", "c")
	bound["spec"].(map[string]any)["nodeName"] = "n1"
	created := admin.must(201, "POST", "/api/v1/namespaces/default/pods", bound)
	stale := "1"
	ev2 := ev("bound")
	ev2.DeleteOptions = &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}
	if err := cs.CoreV1().Pods("default").EvictV1(ctx, ev2); !apierrors.IsConflict(err) {
		t.Errorf("eviction with a stale precondition: %v, want Conflict", err)
	}
	if p, err := cs.CoreV1().Pods("default").Get(ctx, "bound", metav1.GetOptions{}); err != nil || len(p.Status.Conditions) != 0 || p.ResourceVersion != rv(created) {
		t.Errorf("a refused eviction changed the pod: %+v %v", p, err)
	}
	current := rv(created)
	ev2.DeleteOptions.Preconditions.ResourceVersion = &current
	if err := cs.CoreV1().Pods("default").EvictV1(ctx, ev2); err != nil {
		t.Fatalf("evicting a bound pod: %v", err)
	}
	p, err := cs.CoreV1().Pods("default").Get(ctx, "bound", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("evicted bound pod: %+v %v", p, err)
	}
	if len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Type != "DisruptionTarget" || p.Status.Conditions[0].Status != "True" ||
		p.Status.Conditions[0].Reason != "EvictionByEvictionAPI" || p.Status.Conditions[0].Message != "Eviction API: evicting" {
		t.Errorf("evicted pod's conditions: %+v", p.Status.Conditions)
	}

	// Discovery has pods/eviction as policy/v1 Eviction.
	rl, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rl.APIResources {
		found = found || r.Name == "pods/eviction" && r.Group == "policy" && r.Kind == "Eviction"
	}
	if !found {
		t.Error("discovery lacks pods/eviction")
	}
}

func asStatus(err error, se **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	*se = s
	return ok
}

// TestErrorStatusDetails pins the details of error Statuses, which clients
// read without checking (kubectl debug dereferences them on a 404).
func TestErrorStatusDetails(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("p", "c"))
	cases := []struct {
		name, method, path string
		body               any
		code               int
		details            string // the details object, as JSON
	}{
		{"unknown subresource", "GET", "/api/v1/namespaces/default/pods/p/frobnicate", nil, 404, `{}`},
		{"unknown resource", "GET", "/api/v1/namespaces/default/widgets", nil, 404, `{}`},
		{"missing object", "GET", "/api/v1/namespaces/default/pods/nope", nil, 404, `{"name":"nope","kind":"pods"}`},
		{"missing group object", "GET", "/apis/apps/v1/namespaces/default/deployments/nope", nil, 404, `{"name":"nope","group":"apps","kind":"deployments"}`},
		{"already exists", "POST", "/api/v1/namespaces/default/pods", pod("p", "c"), 409, `{"name":"p","kind":"pods"}`},
		{"conflict", "PUT", "/api/v1/namespaces/default/pods/p", map[string]any{"metadata": map[string]any{"name": "p", "resourceVersion": "1"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}}}, 409, `{"name":"p","kind":"pods"}`},
		{"method not allowed", "PUT", "/api/v1/namespaces/default/pods", map[string]any{}, 405, `{}`},
	}
	for _, tc := range cases {
		r := c.do(tc.method, tc.path, tc.body, "")
		var st struct {
			Code    int             `json:"code"`
			Details json.RawMessage `json:"details"`
		}
		if err := json.Unmarshal(r.Body, &st); err != nil {
			t.Errorf("%s: %v: %s", tc.name, err, r.Body)
			continue
		}
		if r.Code != tc.code || st.Code != tc.code || string(st.Details) != tc.details {
			t.Errorf("%s: %d details %s, want %d %s (%s)", tc.name, r.Code, st.Details, tc.code, tc.details, r.Body)
		}
	}
	// An invalid object names the kind and carries a cause per field.
	r := c.do("POST", "/api/v1/namespaces/default/pods", map[string]any{"metadata": map[string]any{"name": "bad"}, "spec": map[string]any{}}, "")
	var st struct {
		Details struct {
			Name   string `json:"name"`
			Kind   string `json:"kind"`
			Causes []struct {
				Field string `json:"field"`
			} `json:"causes"`
		} `json:"details"`
	}
	_ = json.Unmarshal(r.Body, &st)
	if r.Code != 422 || st.Details.Name != "bad" || st.Details.Kind != "Pod" || len(st.Details.Causes) == 0 {
		t.Errorf("invalid pod: %d %s", r.Code, r.Body)
	}
}

// TestReviewsAndEvictionOverProtobuf uses client-go at its default settings
// (protobuf bodies and answers), as kubectl and controllers do.
func TestReviewsAndEvictionOverProtobuf(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("carol", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	carol, err := kubernetes.NewForConfig(&rest.Config{Host: s.SecureURL(),
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := carol.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar("create", "authorization.k8s.io", "selfsubjectrulesreviews", ""), metav1.CreateOptions{})
	if err != nil || !got.Status.Allowed {
		t.Fatalf("SSAR over protobuf: %+v %v", got, err)
	}
	ssr, err := carol.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || ssr.Status.UserInfo.Username != "carol" {
		t.Fatalf("SelfSubjectReview over protobuf: %+v %v", ssr, err)
	}
	admin, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	newClient(t, s).must(201, "POST", "/api/v1/namespaces/default/pods", pod("victim", "c"))
	if err := admin.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: "default"}}); err != nil {
		t.Fatalf("EvictV1 over protobuf: %v", err)
	}
	if _, err := admin.CoreV1().Pods("default").Get(ctx, "victim", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("evicted pod: %v", err)
	}
}

// TestBootstrapRolesReconciled restarts the apiserver over roles an older
// version (or an administrator) left: a default role lacking a rule gets it
// back, one whose autoupdate annotation is "false" is left alone.
func TestBootstrapRolesReconciled(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	basic := c.must(200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user", nil)
	basic["rules"] = basic["rules"].([]any)[:1]
	c.must(200, "PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user", basic)
	disc := c.must(200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery", nil)
	meta(disc)["annotations"].(map[string]any)["rbac.authorization.kubernetes.io/autoupdate"] = "false"
	disc["rules"] = []any{}
	c.must(200, "PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery", disc)

	s.Shutdown()
	s = apiservertest.StartWith(t, s.Options)
	c = newClient(t, s)
	rules, _ := json.Marshal(c.must(200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user", nil)["rules"])
	want := `[{"apiGroups":["authorization.k8s.io"],"resources":["selfsubjectaccessreviews","selfsubjectrulesreviews"],"verbs":["create"]},` +
		`{"apiGroups":["authentication.k8s.io"],"resources":["selfsubjectreviews"],"verbs":["create"]}]`
	if string(rules) != want {
		t.Errorf("system:basic-user after a restart: %s, want %s", rules, want)
	}
	// The rules written as [] read back as none, as kube-apiserver
	// stores an empty list; what matters is that none came back.
	if rules, ok := c.must(200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery", nil)["rules"]; ok && rules != nil {
		t.Errorf("system:discovery (autoupdate false) was changed: %v", rules)
	}
}
