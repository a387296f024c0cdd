package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/apiserver/serviceaccount"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/internal/pki"
)

// tokenClientset is client-go authenticated by a bearer token, with
// client-go's default content types (protobuf for built-in kinds).
func tokenClientset(t *testing.T, s *apiservertest.Server, token string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.SecureURL(), BearerToken: token, QPS: 100, Burst: 100,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI().CA.CertPEM()}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// jwtParts decodes a token's header and payload without verifying it.
func jwtParts(t *testing.T, tok string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWS", tok)
	}
	for i, into := range []*map[string]any{&header, &payload} {
		data, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, into); err != nil {
			t.Fatal(err)
		}
	}
	return header, payload
}

// eventually retries f for up to 10 seconds.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func whoami(ctx context.Context, cs *kubernetes.Clientset) (authenticationv1.UserInfo, error) {
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// TestServiceAccountTokens drives the TokenRequest API through client-go
// and uses what it issues as bearer tokens: identity, RBAC, bound objects,
// audiences, expiry and foreign keys, OIDC discovery and TokenReview.
func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.ServiceAccountMaxTokenExpiration = 2 * time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := userClientset(t, s, rest.ImpersonationConfig{}, "admin", "system:masters")
	const ns = "default"
	sa, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// An unbound token for the API audiences, one hour by default.
	before := time.Now().Truncate(time.Second)
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	if tr.Status.Token == "" || tr.Name != "robot" || tr.Namespace != ns || tr.UID != sa.UID ||
		!reflect.DeepEqual(tr.Spec.Audiences, []string{app.DefaultServiceAccountIssuer}) || tr.Spec.ExpirationSeconds == nil || *tr.Spec.ExpirationSeconds != 3600 {
		t.Fatalf("TokenRequest answer = %+v", tr)
	}
	if d := tr.Status.ExpirationTimestamp.Sub(before); d < time.Hour || d > time.Hour+10*time.Second {
		t.Errorf("expirationTimestamp %v is not an hour away", tr.Status.ExpirationTimestamp)
	}
	header, claims := jwtParts(t, tr.Status.Token)
	pubs, err := serviceaccount.ReadPublicKeys(filepath.Join(s.Options.CertDir, serviceaccount.PubKeyFile))
	if err != nil {
		t.Fatalf("sa.pub in the cert dir: %v", err)
	}
	kid, _ := serviceaccount.KeyID(pubs[0])
	if header["alg"] != "RS256" || header["kid"] != kid {
		t.Errorf("header = %v, want RS256 and kid %s", header, kid)
	}
	iat, exp, nbf := claims["iat"].(float64), claims["exp"].(float64), claims["nbf"].(float64)
	if claims["iss"] != app.DefaultServiceAccountIssuer || claims["sub"] != "system:serviceaccount:default:robot" ||
		!reflect.DeepEqual(claims["aud"], []any{app.DefaultServiceAccountIssuer}) || exp-iat != 3600 || nbf != iat || claims["jti"] == "" {
		t.Errorf("claims = %v", claims)
	}
	wantK8s := map[string]any{"namespace": "default", "serviceaccount": map[string]any{"name": "robot", "uid": string(sa.UID)}}
	if !reflect.DeepEqual(claims["kubernetes.io"], wantK8s) {
		t.Errorf("kubernetes.io claim = %v, want %v", claims["kubernetes.io"], wantK8s)
	}

	// The token is the service account, as kubectl auth whoami shows.
	robot := tokenClientset(t, s, tr.Status.Token)
	ui, err := whoami(ctx, robot)
	if err != nil {
		t.Fatalf("whoami with the token: %v", err)
	}
	want := authenticationv1.UserInfo{Username: "system:serviceaccount:default:robot", UID: string(sa.UID),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"},
		Extra:  map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/credential-id": {"JTI=" + claims["jti"].(string)}}}
	if !reflect.DeepEqual(ui, want) {
		t.Errorf("whoami = %+v\nwant %+v", ui, want)
	}

	// RBAC: nothing before a binding; a RoleBinding to the ServiceAccount
	// grants exactly its Role, in its namespace.
	if _, err := robot.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods before any binding: %v, want forbidden", err)
	}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "robot-reads-pods"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "robot", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "list pods with the binding", func() error {
		_, err := robot.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	if _, err := robot.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list pods in kube-system: %v, want forbidden", err)
	}
	if _, err := robot.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list configmaps: %v, want forbidden", err)
	} else if want := `configmaps is forbidden: User "system:serviceaccount:default:robot" cannot list resource "configmaps" in API group "" in the namespace "default"`; err.Error() != want {
		t.Errorf("forbidden message %q, want %q", err, want)
	}
	if _, err := robot.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create pod: %v, want forbidden", err)
	}

	// A token bound to a pod carries the pod and its node; it dies with
	// the pod.
	node, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sa-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bound"},
		Spec: corev1.PodSpec{ServiceAccountName: "robot", NodeName: "sa-node", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podRef := &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "bound", UID: pod.UID}
	bound, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: podRef}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateToken bound to a pod: %v", err)
	}
	_, claims = jwtParts(t, bound.Status.Token)
	k8s := claims["kubernetes.io"].(map[string]any)
	if !reflect.DeepEqual(k8s["pod"], map[string]any{"name": "bound", "uid": string(pod.UID)}) ||
		!reflect.DeepEqual(k8s["node"], map[string]any{"name": "sa-node", "uid": string(node.UID)}) {
		t.Errorf("pod-bound kubernetes.io claim = %v", k8s)
	}
	ui, err = whoami(ctx, tokenClientset(t, s, bound.Status.Token))
	if err != nil {
		t.Fatalf("whoami with the pod-bound token: %v", err)
	}
	for k, v := range map[string]string{"authentication.kubernetes.io/pod-name": "bound", "authentication.kubernetes.io/pod-uid": string(pod.UID),
		"authentication.kubernetes.io/node-name": "sa-node", "authentication.kubernetes.io/node-uid": string(node.UID)} {
		if got := ui.Extra[k]; len(got) != 1 || got[0] != v {
			t.Errorf("extra %s = %v, want %s", k, got, v)
		}
	}
	// Wrong UID, another account's pod, an unknown kind.
	for _, tc := range []struct {
		ref  authenticationv1.BoundObjectReference
		code int32
		msg  string
	}{
		{authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "bound", UID: "nope"}, 409,
			`Operation cannot be fulfilled on Pod "bound": the UID in the bound object reference (nope) does not match the UID in record. The object might have been deleted and then recreated`},
		{authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "missing"}, 404, `pods "missing" not found`},
		{authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "x"}, 400, `cannot bind token to object of type /v1, Kind=ConfigMap`},
	} {
		_, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &tc.ref}}, metav1.CreateOptions{})
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Code != tc.code || se.ErrStatus.Message != tc.msg {
			t.Errorf("bound to %+v: %v, want %d %q", tc.ref, err, tc.code, tc.msg)
		}
	}
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "bound", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod-bound token stops working once the pod is gone", func() error {
		if _, err := whoami(ctx, tokenClientset(t, s, bound.Status.Token)); !apierrors.IsUnauthorized(err) {
			return fmt.Errorf("whoami: %v, want 401", err)
		}
		return nil
	})

	// Another audience, a short lifetime, an unknown account.
	other, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, tokenClientset(t, s, other.Status.Token)); !apierrors.IsUnauthorized(err) {
		t.Errorf("token for audience vault: %v, want 401", err)
	}
	short := int64(60)
	_, err = admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &short}}, metav1.CreateOptions{})
	if want := `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("60-second token: %v, want %q", err, want)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) ||
		err.Error() != `serviceaccounts "nobody" not found` {
		t.Errorf("token of a missing account: %v", err)
	}

	// Longer than --service-account-max-token-expiration: shortened, with
	// kube-apiserver's warning.
	warned := &warnings{}
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	warnedAdmin, err := kubernetes.NewForConfig(&rest.Config{Host: s.SecureURL(), WarningHandler: warned,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	long := int64(3 * 3600)
	capped, err := warnedAdmin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &long}}, metav1.CreateOptions{})
	if err != nil || *capped.Spec.ExpirationSeconds != 7200 || strings.Join(warned.msgs, "|") != "requested expiration of 10800 seconds shortened to 7200 seconds" {
		t.Errorf("3-hour token: %v, warnings %q", err, warned.msgs)
	}

	// TokenReview answers for these tokens, audiences included.
	rev, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil || !rev.Status.Authenticated || rev.Status.User.Username != "system:serviceaccount:default:robot" ||
		!reflect.DeepEqual(rev.Status.Audiences, []string{app.DefaultServiceAccountIssuer}) {
		t.Errorf("TokenReview: %+v, %v", rev, err)
	}
	rev, err = admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: other.Status.Token, Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	if err != nil || !rev.Status.Authenticated || !reflect.DeepEqual(rev.Status.Audiences, []string{"vault"}) {
		t.Errorf("TokenReview of the vault token for vault: %+v, %v", rev.Status, err)
	}
	rev, err = admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: other.Status.Token}}, metav1.CreateOptions{})
	if err != nil || rev.Status.Authenticated {
		t.Errorf("TokenReview of the vault token for the API: %+v, %v", rev.Status, err)
	}

	// Tokens made elsewhere: expired (with the right key), or signed by
	// another key.
	data, err := os.ReadFile(filepath.Join(s.Options.CertDir, serviceaccount.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	key, err := pki.ParseKeyPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	forge := func(signer any, alg jose.SignatureAlgorithm, kid string, exp time.Time) string {
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: signer, KeyID: kid}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: app.DefaultServiceAccountIssuer, Subject: "system:serviceaccount:default:robot",
			Audience: jwt.Audience{app.DefaultServiceAccountIssuer}, Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(exp.Add(-time.Hour)),
			NotBefore: jwt.NewNumericDate(exp.Add(-time.Hour))}).Claims(map[string]any{"kubernetes.io": wantK8s}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := forge(key, jose.RS256, kid, time.Now().Add(time.Hour))
	if _, err := whoami(ctx, tokenClientset(t, s, good)); err != nil {
		t.Errorf("a token made with the server's key: %v", err)
	}
	expired := forge(key, jose.RS256, kid, time.Now().Add(-5*time.Minute))
	if _, err := whoami(ctx, tokenClientset(t, s, expired)); !apierrors.IsUnauthorized(err) {
		t.Errorf("expired token: %v, want 401", err)
	}
	foreignKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, fk := range []string{kid, ""} {
		foreign := forge(foreignKey, jose.ES256, fk, time.Now().Add(time.Hour))
		if _, err := whoami(ctx, tokenClientset(t, s, foreign)); !apierrors.IsUnauthorized(err) {
			t.Errorf("token signed by another key (kid %q): %v, want 401", fk, err)
		}
	}

	// OIDC discovery: any service account may read it, and an outsider
	// verifies the token with it alone.
	get := func(token, path string) (int, []byte, http.Header) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.SecureURL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfigFor(t, s)}}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body, resp.Header
	}
	code, body, hdr := get(tr.Status.Token, "/.well-known/openid-configuration")
	var cfg map[string]any
	if code != 200 || json.Unmarshal(body, &cfg) != nil || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("openid-configuration: %d %s", code, body)
	}
	wantCfg := map[string]any{"issuer": app.DefaultServiceAccountIssuer, "jwks_uri": s.SecureURL() + "/openid/v1/jwks",
		"response_types_supported": []any{"id_token"}, "subject_types_supported": []any{"public"},
		"id_token_signing_alg_values_supported": []any{"RS256"}}
	if !reflect.DeepEqual(cfg, wantCfg) {
		t.Errorf("openid-configuration = %v\nwant %v", cfg, wantCfg)
	}
	code, body, hdr = get(tr.Status.Token, "/openid/v1/jwks")
	var set jose.JSONWebKeySet
	if code != 200 || json.Unmarshal(body, &set) != nil || hdr.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("jwks: %d %s", code, body)
	}
	keys := set.Key(kid)
	if len(keys) != 1 || keys[0].Algorithm != "RS256" || keys[0].Use != "sig" {
		t.Fatalf("jwks has no RS256 signing key %s: %s", kid, body)
	}
	parsed, err := jwt.ParseSigned(tr.Status.Token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var verified jwt.Claims
	if err := parsed.Claims(keys[0].Key, &verified); err != nil {
		t.Fatalf("the JWKS does not verify the token: %v", err)
	}
	if err := verified.Validate(jwt.Expected{Issuer: cfg["issuer"].(string), AnyAudience: jwt.Audience{app.DefaultServiceAccountIssuer}}); err != nil {
		t.Errorf("claims: %v", err)
	}
	alice := userClientset(t, s, rest.ImpersonationConfig{}, "alice")
	if _, err := alice.RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx); !apierrors.IsForbidden(err) {
		t.Errorf("jwks as a user outside system:serviceaccounts: %v, want forbidden", err)
	}

	// The real kubectl creates tokens against us.
	kubectl := oracle.Path(t, "kubectl")
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "create", "token", "default", "--duration=2h", "--audience=vault").Output()
	if err != nil {
		t.Fatalf("kubectl create token default: %v: %s", err, out)
	}
	tok := strings.TrimSpace(string(out))
	_, claims = jwtParts(t, tok)
	if claims["sub"] != "system:serviceaccount:default:default" || claims["exp"].(float64)-claims["iat"].(float64) != 7200 ||
		!reflect.DeepEqual(claims["aud"], []any{"vault"}) {
		t.Errorf("kubectl's token claims = %v", claims)
	}
}

// tlsConfigFor trusts the test server's CA and presents no certificate.
func tlsConfigFor(t *testing.T, s *apiservertest.Server) *tls.Config {
	t.Helper()
	return &tls.Config{RootCAs: s.PKI().CA.Pool(), MinVersion: tls.VersionTLS12}
}

// TestServiceAccountAdmission checks what ServiceAccount admission does to
// pods, field by field against what kube-apiserver writes.
func TestServiceAccountAdmission(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.DisableAdmissionPlugins = nil })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := userClientset(t, s, rest.ImpersonationConfig{}, "admin", "system:masters")
	const ns = "default"
	newPod := func(name string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "a", Image: "busybox"}, {Name: "b", Image: "busybox"}}}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}

	// No default account yet: kube-apiserver's 403.
	_, err := admin.CoreV1().Pods(ns).Create(ctx, newPod("early", nil), metav1.CreateOptions{})
	if want := `pods "early" is forbidden: error looking up service account default/default: serviceaccount "default" not found`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("pod without a default account: %v, want %q", err, want)
	}
	_, err = admin.CoreV1().Pods(ns).Create(ctx, newPod("other", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "ghost" }), metav1.CreateOptions{})
	if want := `pods "other" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found`; err == nil || err.Error() != want {
		t.Errorf("pod of a missing account: %v, want %q", err, want)
	}

	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	no := false
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet"},
		AutomountServiceAccountToken: &no}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := admin.CoreV1().Pods(ns).Create(ctx, newPod("web", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}
	if p.Spec.ServiceAccountName != "default" || p.Spec.DeprecatedServiceAccount != "default" { //nolint:staticcheck // kube mirrors it
		t.Errorf("serviceAccountName %q, serviceAccount %q", p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount) //nolint:staticcheck
	}
	if !reflect.DeepEqual(p.Spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}}) {
		t.Errorf("imagePullSecrets = %v", p.Spec.ImagePullSecrets)
	}
	if len(p.Spec.Volumes) != 1 {
		t.Fatalf("volumes = %+v", p.Spec.Volumes)
	}
	v := p.Spec.Volumes[0]
	suffix, ok := strings.CutPrefix(v.Name, "kube-api-access-")
	if !ok || len(suffix) != 5 || strings.Trim(suffix, "bcdfghjklmnpqrstvwxz2456789") != "" {
		t.Errorf("volume name %q", v.Name)
	}
	mode, exp := int32(420), int64(3607)
	want := corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: &mode, Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}}
	if !reflect.DeepEqual(v.VolumeSource, want) {
		got, _ := json.Marshal(v.VolumeSource)
		exp, _ := json.Marshal(want)
		t.Errorf("volume source\n got %s\nwant %s", got, exp)
	}
	wantMount := corev1.VolumeMount{Name: v.Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
	for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
		if !reflect.DeepEqual(c.VolumeMounts, []corev1.VolumeMount{wantMount}) {
			t.Errorf("container %s mounts %+v, want %+v", c.Name, c.VolumeMounts, wantMount)
		}
	}

	// automountServiceAccountToken: false on the pod or its account; the
	// pod's true wins over the account's false.
	yes := true
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Pod)
		mount  bool
	}{
		{"pod-opts-out", func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = &no }, false},
		{"account-opts-out", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet" }, false},
		{"pod-overrides-account", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet"; p.Spec.AutomountServiceAccountToken = &yes }, true},
		{"own-mount-kept", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "mine", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
			}
			p.Spec.InitContainers[0].VolumeMounts = p.Spec.Containers[0].VolumeMounts
		}, false},
	} {
		p, err := admin.CoreV1().Pods(ns).Create(ctx, newPod(tc.name, tc.mutate), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		mounted := false
		for _, v := range p.Spec.Volumes {
			mounted = mounted || strings.HasPrefix(v.Name, "kube-api-access-")
		}
		if mounted != tc.mount {
			t.Errorf("%s: token volume mounted %v, want %v: %+v", tc.name, mounted, tc.mount, p.Spec.Volumes)
		}
	}
}

// TestServiceAccountTokensForKubelets: a kubelet (system:node:NAME) gets
// tokens of its own pods' accounts, bound to those pods, in client-go's
// protobuf; the token admission asks for (3607 s) is extended to a year
// with warnafter, as kube-apiserver does.
func TestServiceAccountTokensForKubelets(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "audit.log")
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) {
		o.ServiceAccountJWKSURI = "https://keys.example.com/jwks"
		o.AuditLogPath = logPath
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := userClientset(t, s, rest.ImpersonationConfig{}, "admin", "system:masters")
	const ns = "default"
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for _, n := range []string{"node-a", "node-b"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + n},
			Spec: corev1.PodSpec{ServiceAccountName: "web", NodeName: n, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
				// The token volume ServiceAccount admission (off here) adds:
				// a kubelet may only ask tokens of the audiences its pod names.
				Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods[n] = p
	}
	// The kubelet's client: its certificate, client-go's default protobuf.
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("system:node:node-a", []string{"system:nodes"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kubelet, err := kubernetes.NewForConfig(&rest.Config{Host: s.SecureURL(),
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(3607)
	req := func(p *corev1.Pod) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID}}}
	}
	var tr *authenticationv1.TokenRequest
	eventually(t, "the kubelet's token for its pod (the node graph may lag)", func() error {
		var err error
		tr, err = kubelet.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "web", req(pods["node-a"]), metav1.CreateOptions{})
		return err
	})
	_, claims := jwtParts(t, tr.Status.Token)
	k8s := claims["kubernetes.io"].(map[string]any)
	if d := claims["exp"].(float64) - claims["iat"].(float64); d != serviceaccount.ExpirationExtensionSeconds {
		t.Errorf("admission's token lasts %v s, want the one-year extension", d)
	}
	if w, _ := k8s["warnafter"].(float64); w-claims["iat"].(float64) != 3607 {
		t.Errorf("warnafter = %v, want iat+3607 (claims %v)", k8s["warnafter"], claims)
	}
	if d := time.Until(tr.Status.ExpirationTimestamp.Time); d < time.Hour || d > time.Hour+time.Minute {
		t.Errorf("expirationTimestamp is %v away, want the requested 3607 s", d)
	}
	// The audit log names the credential issued, as kube-apiserver's.
	waitFor(t, 5*time.Second, func() bool {
		data, _ := os.ReadFile(logPath)
		for _, line := range strings.Split(string(data), "\n") {
			var ev struct {
				ObjectRef   struct{ Subresource string } `json:"objectRef"`
				Annotations map[string]string            `json:"annotations"`
			}
			if json.Unmarshal([]byte(line), &ev) == nil && ev.ObjectRef.Subresource == "token" &&
				ev.Annotations["authentication.kubernetes.io/issued-credential-id"] == "JTI="+claims["jti"].(string) {
				return true
			}
		}
		return false
	})
	if _, err := kubelet.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "web", req(pods["node-b"]), metav1.CreateOptions{}); !apierrors.IsForbidden(err) ||
		err.Error() != `serviceaccounts "web" is forbidden: node requested token bound to a pod scheduled on a different node` {
		t.Errorf("token bound to another node's pod: %v", err)
	}
	if _, err := kubelet.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "web", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) ||
		err.Error() != `serviceaccounts "web" is forbidden: node requested token not bound to a pod` {
		t.Errorf("unbound token for a kubelet: %v", err)
	}
	if _, err := kubelet.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "web", req(pods["node-a"]), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token of an account none of its pods uses: %v", err)
	}

	// Secret- and node-bound tokens, through the admin.
	sec, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []authenticationv1.BoundObjectReference{{Kind: "Secret", APIVersion: "v1", Name: "holder"}, {Kind: "Node", APIVersion: "v1", Name: "node-b"}} {
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "web", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &ref}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("token bound to %s: %v", ref.Kind, err)
		}
		ui, err := whoami(ctx, tokenClientset(t, s, tr.Status.Token))
		if err != nil {
			t.Fatalf("whoami with the %s-bound token: %v", ref.Kind, err)
		}
		if ref.Kind == "Node" && (len(ui.Extra["authentication.kubernetes.io/node-name"]) != 1 || ui.Extra["authentication.kubernetes.io/node-name"][0] != "node-b") {
			t.Errorf("node-bound token's extra = %v", ui.Extra)
		}
	}
	if err := admin.CoreV1().Secrets(ns).Delete(ctx, sec.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// --service-account-jwks-uri is what the discovery document names.
	raw, err := admin.RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"jwks_uri":"https://keys.example.com/jwks"`) {
		t.Errorf("openid-configuration with --service-account-jwks-uri: %s, %v", raw, err)
	}

	// Discovery lists the subresource as kube-apiserver does.
	rl, err := admin.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rl.APIResources {
		if r.Name == "serviceaccounts/token" {
			found = true
			if r.Group != "authentication.k8s.io" || r.Version != "v1" || r.Kind != "TokenRequest" || strings.Join(r.Verbs, ",") != "create" {
				t.Errorf("serviceaccounts/token in discovery = %+v", r)
			}
		}
	}
	if !found {
		t.Error("discovery does not list serviceaccounts/token")
	}
}

type warnings struct{ msgs []string }

func (w *warnings) HandleWarningHeader(_ int, _ string, msg string) { w.msgs = append(w.msgs, msg) }

// TestServiceAccountKeyKeptAcrossRestarts: the key generated on first
// start stays in --cert-dir, so tokens issued before a restart still work.
func TestServiceAccountKeyKeptAcrossRestarts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test")
	}
	opts := apiservertest.Options(t.TempDir())
	apiservertest.WithTLS(&opts)
	s := apiservertest.StartWith(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := userClientset(t, s, rest.ImpersonationConfig{}, "admin", "system:masters")
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown()

	again := opts
	again.SecureListener, again.SecurePort = nil, 0
	apiservertest.WithTLS(&again)
	s2 := apiservertest.StartWith(t, again)
	eventually(t, "the old token after the restart", func() error {
		ui, err := whoami(ctx, tokenClientset(t, s2, tr.Status.Token))
		if err == nil && ui.Username != "system:serviceaccount:default:robot" {
			return fmt.Errorf("whoami = %+v", ui)
		}
		return err
	})
}

// TestOIDCDiscoveryAtTheAdvertiseAddress starts the server as compose does,
// with no --advertise-address and a wildcard bind address: as in
// kube-apiserver, the advertise address then defaults to the host's
// interface address, and the OIDC discovery document's jwks_uri, the
// kubernetes Endpoints and the serving certificate all name it. Kubernetes'
// conformance spec "ServiceAccountIssuerDiscovery should support OIDC
// discovery of service account issuer" fetches jwks_uri from a pod with
// the in-cluster CA; a jwks_uri at 127.0.0.1 failed it.
func TestOIDCDiscoveryAtTheAdvertiseAddress(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.AdvertiseAddress, o.BindAddress = "", "0.0.0.0" })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := userClientset(t, s, rest.ImpersonationConfig{}, "admin", "system:masters")

	raw, err := admin.CoreV1().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("openid-configuration %s: %v", raw, err)
	}
	u, err := url.Parse(cfg.JWKSURI)
	if err != nil {
		t.Fatalf("jwks_uri %q: %v", cfg.JWKSURI, err)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Scheme != "https" || u.Path != "/openid/v1/jwks" || ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		t.Fatalf("jwks_uri %q, want https://<this host's interface address>:<secure port>/openid/v1/jwks", cfg.JWKSURI)
	}
	if want := strconv.Itoa(s.Options.SecurePort); u.Port() != want {
		t.Errorf("jwks_uri %q: port %s, want the secure port %s", cfg.JWKSURI, u.Port(), want)
	}
	eventually(t, "the kubernetes Endpoints at the jwks_uri's address", func() error {
		ep, err := admin.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != ip.String() {
			return fmt.Errorf("endpoints %+v, want address %s", ep.Subsets, ip)
		}
		return nil
	})

	// What the pod does: fetch jwks_uri, verifying the serving certificate
	// for that address against the cluster CA. The server listens on
	// loopback here, so the connection goes there with the jwks_uri's name.
	loopback := s.Options.SecureListener.Addr().String()
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tc := tlsConfigFor(t, s)
	tc.Certificates = []tls.Certificate{cert}
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: tc,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, loopback)
		},
	}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.JWKSURI, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", cfg.JWKSURI, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var set jose.JSONWebKeySet
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &set) != nil || len(set.Keys) == 0 {
		t.Fatalf("GET %s: %d %s, want the key set", cfg.JWKSURI, resp.StatusCode, body)
	}
}
