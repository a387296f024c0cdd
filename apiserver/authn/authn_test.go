package authn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/internal/pki"
)

// secrets is a SecretGetter over a map, keyed "namespace/name".
type secrets map[string]*api.Secret

func (s secrets) GetSecret(_ context.Context, ns, name string) (*api.Secret, error) {
	if name == "bootstrap-token-broken" {
		return nil, errors.New("etcd is down")
	}
	if sec, ok := s[ns+"/"+name]; ok {
		return sec, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "secrets"}, name)
}

func (s secrets) add(sec *api.Secret) { s[sec.Namespace+"/"+sec.Name] = sec }

func mustSecret(t *testing.T, id, secret string, ttl time.Duration, groups []string) *api.Secret {
	t.Helper()
	s, err := pki.BootstrapTokenSecret(id, secret, ttl, groups, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true},
		{"  Bearer abc  ", "abc", true},
		{"Bearer abc extra", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer  abc", "", false},
		{"Basic YWxpY2U6cHc=", "", false},
		{"", "", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		got, ok := BearerToken(r)
		if got != tc.token || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.token, tc.ok)
		}
	}
}

func TestTokenFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		wantErr string
		check   map[string]request.User
	}{
		{
			name: "valid",
			content: "t0k3n,alice,1001,\"dev,ops\"\n" +
				"\n" +
				"other,bob,,\n" +
				"plain,carol,c-1\n" +
				"extra,dave,d,\"g,g\",ignored,columns\n",
			check: map[string]request.User{
				"t0k3n": {Name: "alice", UID: "1001", Groups: []string{"dev", "ops", AllAuthenticated}},
				"other": {Name: "bob", Groups: []string{AllAuthenticated}},
				"plain": {Name: "carol", UID: "c-1", Groups: []string{AllAuthenticated}},
				"extra": {Name: "dave", UID: "d", Groups: []string{"g", AllAuthenticated}},
			},
		},
		{name: "empty file", content: "", check: map[string]request.User{}},
		{name: "two columns", content: "good,u,1\nbad,u\n", wantErr: "line 2: must have at least 3 columns (token, user name, user uid), found 2"},
		{name: "empty token", content: ",u,1\n", wantErr: "line 1: empty token"},
		{name: "empty user", content: "tok,,1\n", wantErr: "line 1: empty user name"},
		{name: "duplicate", content: "tok,a,1\nx,b,2\ntok,c,3\n", wantErr: "line 3: duplicate token"},
		{name: "bad quoting", content: "tok,a,1,\"unterminated\n", wantErr: "extraneous or missing \" in quoted-field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "tokens.csv")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			tf, err := NewTokenFile(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want %q naming the file", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tf.Len() != len(tc.check) {
				t.Errorf("Len = %d, want %d", tf.Len(), len(tc.check))
			}
			for tok, want := range tc.check {
				u, ok, err := tf.AuthenticateToken(context.Background(), tok)
				if err != nil || !ok {
					t.Fatalf("token %q: ok=%v err=%v", tok, ok, err)
				}
				if u.Name != want.Name || u.UID != want.UID || !slices.Equal(u.Groups, want.Groups) {
					t.Errorf("token %q: %+v, want %+v", tok, *u, want)
				}
				u.Groups[0] = "mutated"
			}
			for tok, want := range tc.check {
				if u, _, _ := tf.AuthenticateToken(context.Background(), tok); u.Groups[0] != want.Groups[0] {
					t.Errorf("caller mutation leaked into the authenticator: %q", u.Groups)
				}
			}
			if _, ok, err := tf.AuthenticateToken(context.Background(), "unknown"); ok || err != nil {
				t.Errorf("unknown token: ok=%v err=%v", ok, err)
			}
		})
	}
	if _, err := NewTokenFile(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Error("missing file: want error")
	}
}

func TestBootstrapTokenAuthenticator(t *testing.T) {
	t.Parallel()
	const secret = "0123456789abcdef"
	store := secrets{}
	store.add(mustSecret(t, "abcdef", secret, time.Hour, []string{"system:bootstrappers:kubeadm:default-node-token"}))
	store.add(mustSecret(t, "noexp0", secret, 0, nil))
	expired := mustSecret(t, "expird", secret, time.Hour, nil)
	expired.Data["expiration"] = []byte(time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
	store.add(expired)
	garbled := mustSecret(t, "garbld", secret, time.Hour, nil)
	garbled.Data["expiration"] = []byte("next tuesday")
	store.add(garbled)
	noAuth := mustSecret(t, "noauth", secret, time.Hour, nil)
	delete(noAuth.Data, "usage-bootstrap-authentication")
	store.add(noAuth)
	falseAuth := mustSecret(t, "false0", secret, time.Hour, nil)
	falseAuth.Data["usage-bootstrap-authentication"] = []byte("yes")
	store.add(falseAuth)
	opaque := mustSecret(t, "opaque", secret, time.Hour, nil)
	opaque.Type = api.SecretTypeOpaque
	store.add(opaque)
	deleting := mustSecret(t, "delete", secret, time.Hour, nil)
	now := api.Now()
	deleting.DeletionTimestamp = &now
	store.add(deleting)
	badGroup := mustSecret(t, "badgrp", secret, time.Hour, nil)
	badGroup.Data["auth-extra-groups"] = []byte("system:bootstrappers:ok,system:masters")
	store.add(badGroup)
	idMismatch := mustSecret(t, "idmism", secret, time.Hour, nil)
	idMismatch.Data["token-id"] = []byte("zzzzzz")
	store.add(idMismatch)
	wrongNS := mustSecret(t, "wrongn", secret, time.Hour, nil)
	wrongNS.Namespace = "default"
	store.add(wrongNS)

	a := NewBootstrapToken(store)
	tests := []struct {
		name       string
		token      string
		wantUser   string
		wantGroups []string
		wantErr    string // "" and wantUser "": not ok, no error
	}{
		{name: "valid", token: "abcdef." + secret, wantUser: "system:bootstrap:abcdef",
			wantGroups: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", AllAuthenticated}},
		{name: "no expiration", token: "noexp0." + secret, wantUser: "system:bootstrap:noexp0",
			wantGroups: []string{"system:bootstrappers", AllAuthenticated}},
		{name: "not bootstrap form", token: "some-static-token"},
		{name: "upper case", token: "ABCDEF." + secret},
		{name: "unknown id", token: "zzzzzz." + secret, wantErr: "no bootstrap token secret kube-system/bootstrap-token-zzzzzz"},
		{name: "wrong secret", token: "abcdef.ffffffffffffffff", wantErr: "invalid value for key token-secret"},
		{name: "expired", token: "expird." + secret, wantErr: "has expired"},
		{name: "unparseable expiration", token: "garbld." + secret, wantErr: "has expired"},
		{name: "usage missing", token: "noauth." + secret, wantErr: "not marked usage-bootstrap-authentication=true"},
		{name: "usage not true", token: "false0." + secret, wantErr: "not marked usage-bootstrap-authentication=true"},
		{name: "wrong type", token: "opaque." + secret, wantErr: "invalid type, expected bootstrap.kubernetes.io/token"},
		{name: "being deleted", token: "delete." + secret, wantErr: "is deleted and awaiting removal"},
		{name: "invalid extra group", token: "badgrp." + secret, wantErr: `bootstrap group "system:masters" is invalid`},
		{name: "token-id mismatch", token: "idmism." + secret, wantErr: "invalid value for key token-id"},
		{name: "secret outside kube-system", token: "wrongn." + secret, wantErr: "no bootstrap token secret"},
		{name: "getter failure", token: "broken." + secret, wantErr: "etcd is down"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, ok, err := a.AuthenticateToken(context.Background(), tc.token)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || ok {
					t.Fatalf("ok=%v err=%v, want error %q", ok, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "ffffffffffffffff") {
					t.Fatalf("error leaks the token secret: %v", err)
				}
			case tc.wantUser == "":
				if ok || err != nil {
					t.Fatalf("ok=%v err=%v, want not ok without error", ok, err)
				}
			default:
				if err != nil || !ok {
					t.Fatalf("ok=%v err=%v", ok, err)
				}
				if u.Name != tc.wantUser || !slices.Equal(u.Groups, tc.wantGroups) {
					t.Fatalf("user %+v, want %s %q", *u, tc.wantUser, tc.wantGroups)
				}
			}
		})
	}

	// time moves: a token valid now is refused after its expiration
	later := NewBootstrapToken(store)
	later.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, _, err := later.AuthenticateToken(context.Background(), "abcdef."+secret); err == nil || !strings.Contains(err.Error(), "has expired") {
		t.Errorf("after expiry: err = %v", err)
	}
}

type fixed struct {
	u   *request.User
	ok  bool
	err error
}

func (f fixed) AuthenticateRequest(*http.Request) (*request.User, bool, error) {
	return f.u, f.ok, f.err
}

func TestUnion(t *testing.T) {
	t.Parallel()
	alice := &request.User{Name: "alice"}
	bob := &request.User{Name: "bob"}
	e1, e2 := errors.New("bad cert"), errors.New("bad token")
	tests := []struct {
		name     string
		as       []Authenticator
		wantUser string
		wantErrs []error
	}{
		{"none", nil, "", nil},
		{"all absent", []Authenticator{fixed{}, fixed{}}, "", nil},
		{"first ok wins", []Authenticator{fixed{u: alice, ok: true}, fixed{u: bob, ok: true}}, "alice", nil},
		{"absent then ok", []Authenticator{fixed{}, fixed{u: bob, ok: true}}, "bob", nil},
		{"error then ok", []Authenticator{fixed{err: e1}, fixed{u: bob, ok: true}}, "bob", nil},
		{"errors joined", []Authenticator{fixed{err: e1}, fixed{}, fixed{err: e2}}, "", []error{e1, e2}},
	}
	for _, tc := range tests {
		u, ok, err := Union(tc.as...).AuthenticateRequest(httptest.NewRequest("GET", "/", nil))
		if tc.wantUser != "" {
			if !ok || err != nil || u.Name != tc.wantUser {
				t.Errorf("%s: %v %v %v, want %s", tc.name, u, ok, err, tc.wantUser)
			}
			continue
		}
		if ok {
			t.Errorf("%s: ok", tc.name)
		}
		if len(tc.wantErrs) == 0 && err != nil {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		for _, want := range tc.wantErrs {
			if !errors.Is(err, want) {
				t.Errorf("%s: err = %v, want it to wrap %v", tc.name, err, want)
			}
		}
	}
}

func TestX509Authenticator(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("kubernetes", 0)
	if err != nil {
		t.Fatal(err)
	}
	rogue, err := pki.NewCA("kubernetes", 0) // same name, different key
	if err != nil {
		t.Fatal(err)
	}
	parse := func(p []byte, _ []byte, err error) *x509.Certificate {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		c, err := pki.ParseCertPEM(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	good := parse(ca.IssueClient("alice", []string{"dev"}, time.Hour))
	noCN := parse(ca.IssueClient("x", nil, time.Hour))
	noCN.Subject.CommonName = "" // what the authenticator reads; the chain still verifies
	serving := parse(ca.IssueServing("kube-apiserver", []string{"localhost"}, nil, time.Hour))
	foreign := parse(rogue.IssueClient("alice", []string{"system:masters"}, time.Hour))

	a := NewX509(ca.Pool())
	req := func(certs ...*x509.Certificate) *http.Request {
		r := httptest.NewRequest("GET", "https://x/", nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: certs}
		return r
	}
	tests := []struct {
		name     string
		a        *X509
		r        *http.Request
		wantUser string
		wantErr  string
	}{
		{name: "valid", a: a, r: req(good), wantUser: "alice"},
		{name: "no TLS", a: a, r: httptest.NewRequest("GET", "/", nil)},
		{name: "TLS without certificate", a: a, r: req()},
		{name: "empty CN", a: a, r: req(noCN)},
		{name: "other CA with the same name", a: a, r: req(foreign), wantErr: "certificate signed by unknown authority"},
		{name: "serving certificate", a: a, r: req(serving), wantErr: "incompatible key usage"},
		{name: "expired", a: &X509{pool: ca.Pool(), now: func() time.Time { return time.Now().Add(2 * time.Hour) }}, r: req(good), wantErr: "expired"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, ok, err := tc.a.AuthenticateRequest(tc.r)
			switch {
			case tc.wantErr != "":
				if err == nil || ok || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "verifying certificate SN=") {
					t.Fatalf("ok=%v err=%v, want %q", ok, err, tc.wantErr)
				}
			case tc.wantUser == "":
				if ok || err != nil {
					t.Fatalf("ok=%v err=%v, want not ok", ok, err)
				}
			default:
				if !ok || err != nil || u.Name != tc.wantUser || !slices.Equal(u.Groups, []string{"dev", AllAuthenticated}) {
					t.Fatalf("user %+v ok=%v err=%v", u, ok, err)
				}
			}
		})
	}
}
