package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

type fakeGetter struct {
	secrets map[string]*api.Secret
	sas     map[string]*api.ServiceAccount
	pods    map[string]*api.Pod
	nodes   map[string]*api.Node
}

func notFound(res, name string) error {
	return apierrors.NewNotFound(apierrors.GroupResource{Resource: res}, name)
}

func (f fakeGetter) GetServiceAccount(_ context.Context, ns, name string) (*api.ServiceAccount, error) {
	if v, ok := f.sas[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, notFound("serviceaccounts", name)
}

func (f fakeGetter) GetPod(_ context.Context, ns, name string) (*api.Pod, error) {
	if v, ok := f.pods[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, notFound("pods", name)
}

func (f fakeGetter) GetSecret(_ context.Context, ns, name string) (*api.Secret, error) {
	if v, ok := f.secrets[ns+"/"+name]; ok {
		return v, nil
	}
	return nil, notFound("secrets", name)
}

func (f fakeGetter) GetNode(_ context.Context, name string) (*api.Node, error) {
	if v, ok := f.nodes[name]; ok {
		return v, nil
	}
	return nil, notFound("nodes", name)
}

// TestAuthenticator covers key rotation (--service-account-key-file),
// several issuers, audiences, lifetimes and bound objects, with
// Kubernetes' errors.
func TestAuthenticator(t *testing.T) {
	t.Parallel()
	oldKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	newKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	oldKeys, _ := NewKeys(oldKey)
	keys, err := NewKeys(newKey, &oldKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if keys.alg != "ES256" || len(keys.PublicKeys()) != 2 {
		t.Fatalf("keys = %s, %d public", keys.alg, len(keys.PublicKeys()))
	}
	now := time.Now()
	sa := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "robot", UID: "sa-uid"}}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"}}
	deleted := api.NewTime(now.Add(-2 * time.Minute))
	dying := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "dying", UID: "dying-uid", DeletionTimestamp: &deleted}}
	getter := fakeGetter{sas: map[string]*api.ServiceAccount{"ns/robot": sa},
		pods: map[string]*api.Pod{"ns/p": pod, "ns/dying": dying}}
	a := NewAuthenticator(keys, []string{"https://new", "https://old"}, []string{"api"}, getter)

	sign := func(issuer string, k *Keys, spec TokenSpec, at time.Time) string {
		t.Helper()
		iss := NewIssuer(issuer, k)
		iss.now = func() time.Time { return at }
		if spec.ServiceAccount == nil {
			spec.ServiceAccount = sa
		}
		if spec.Audiences == nil {
			spec.Audiences = []string{"api"}
		}
		if spec.ExpirationSeconds == 0 {
			spec.ExpirationSeconds = 3600
		}
		tok, _, err := iss.Sign(spec)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	foreign, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	foreignKeys, _ := NewKeys(foreign)
	gone := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "robot", UID: "old-uid"}}
	for _, tc := range []struct {
		name  string
		token string
		ours  bool
		err   string
	}{
		{"new key, first issuer", sign("https://new", keys, TokenSpec{}, now), true, ""},
		{"old key, second issuer (rotation)", sign("https://old", oldKeys, TokenSpec{}, now), true, ""},
		{"another issuer: not ours", sign("https://elsewhere", keys, TokenSpec{}, now), false, ""},
		{"static token: not ours", "abcdef.0123456789abcdef", false, ""},
		{"another key (its kid unknown here, as in Kubernetes)", sign("https://new", foreignKeys, TokenSpec{}, now), false, "invalid signature, no keys found"},
		{"another audience", sign("https://new", keys, TokenSpec{Audiences: []string{"vault"}}, now), false,
			`token audiences ["vault"] is invalid for the target audiences ["api"]`},
		{"expired", sign("https://new", keys, TokenSpec{ExpirationSeconds: 600}, now.Add(-11*time.Minute)), false, "service account token has expired"},
		{"recreated account", sign("https://new", keys, TokenSpec{ServiceAccount: gone}, now), false,
			"service account UID (sa-uid) does not match claim (old-uid)"},
		{"bound pod", sign("https://new", keys, TokenSpec{Binding: Binding{Pod: pod}}, now), true, ""},
		{"bound pod deleted", sign("https://new", keys, TokenSpec{Binding: Binding{Pod: &api.Pod{ObjectMeta: api.ObjectMeta{Name: "gone", UID: "x"}}}}, now), false,
			"service account token has been invalidated"},
		{"bound pod terminating for over a minute", sign("https://new", keys, TokenSpec{Binding: Binding{Pod: dying}}, now), false,
			"service account token has been invalidated"},
		{"bound pod recreated", sign("https://new", keys, TokenSpec{Binding: Binding{Pod: &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", UID: "older"}}}}, now), false,
			"pod UID (pod-uid) does not match service account pod ref claim (older)"},
		{"bound node missing", sign("https://new", keys, TokenSpec{Binding: Binding{Node: &api.Node{ObjectMeta: api.ObjectMeta{Name: "n", UID: "u"}}}}, now), false,
			"service account token has been invalidated"},
	} {
		u, ok, err := a.AuthenticateToken(context.Background(), tc.token)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, %v; want error %q", tc.name, u, err, tc.err)
			}
		case tc.ours != ok || err != nil:
			t.Errorf("%s: ok %v, err %v; want ok %v", tc.name, ok, err, tc.ours)
		case ok && (u.Name != "system:serviceaccount:ns:robot" || u.UID != "sa-uid"):
			t.Errorf("%s: user %+v", tc.name, u)
		}
	}
}

// TestLegacyTokens: Secret-based tokens (issuer kubernetes/serviceaccount,
// as the controller-manager writes them) authenticate while the Secret
// holds them and the account matches, with Kubernetes' errors.
func TestLegacyTokens(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	keys, _ := NewKeys(key)
	legacy := func(claims map[string]any) string {
		sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: keys.signKID}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(sig).Claims(claims).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	claims := func(secret, uid string) map[string]any {
		return map[string]any{"iss": LegacyIssuer, "sub": "system:serviceaccount:ns:robot",
			"kubernetes.io/serviceaccount/namespace": "ns", "kubernetes.io/serviceaccount/secret.name": secret,
			"kubernetes.io/serviceaccount/service-account.name": "robot", "kubernetes.io/serviceaccount/service-account.uid": uid}
	}
	good := legacy(claims("robot-token", "sa-uid"))
	stale := legacy(claims("robot-token", "old-uid"))
	invalidated := legacy(claims("revoked", "sa-uid"))
	getter := fakeGetter{
		sas: map[string]*api.ServiceAccount{"ns/robot": {ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "robot", UID: "sa-uid"}}},
		secrets: map[string]*api.Secret{
			"ns/robot-token": {ObjectMeta: api.ObjectMeta{Name: "robot-token"}, Data: map[string][]byte{"token": []byte(good)}},
			"ns/revoked": {ObjectMeta: api.ObjectMeta{Name: "revoked", Labels: map[string]string{InvalidSinceLabelKey: "2026-01-01"}},
				Data: map[string][]byte{"token": []byte(invalidated)}},
		},
	}
	a := NewAuthenticator(keys, []string{"https://kubernetes.default.svc.cluster.local"}, []string{"https://kubernetes.default.svc.cluster.local"}, getter)
	u, ok, err := a.AuthenticateToken(context.Background(), good)
	if !ok || err != nil || u.Name != "system:serviceaccount:ns:robot" || u.UID != "sa-uid" || len(u.Groups) != 3 {
		t.Errorf("legacy token: %+v, %v, %v", u, ok, err)
	}
	for _, tc := range []struct{ name, token, want string }{
		{"not the Secret's copy", stale, "Token does not match server's copy"},
		{"secret gone", legacy(claims("gone", "sa-uid")), "Token has been invalidated"},
		{"marked invalid", invalidated, "the token in secret ns/revoked for service account ns/robot has been marked invalid"},
		{"claims incomplete", legacy(map[string]any{"iss": LegacyIssuer, "sub": "system:serviceaccount:ns:robot"}), "namespace claim is missing"},
	} {
		if _, _, err := a.AuthenticateToken(context.Background(), tc.token); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
