package e2e_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// TestBearerTokenAuthz is e2e.test's [FeatureGate:KubeletFineGrainedAuthz]
// specs on a real kubelet: a ServiceAccount's token, checked with a
// TokenReview, reaches /healthz on the kubelet's port when RBAC grants
// nodes/healthz or nodes/proxy, and is refused (403 naming both) with
// nodes/configz alone; no token or a bad one is 401.
func TestBearerTokenAuthz(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	n := startNode(t, ctx, 3)
	get := func(token string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+n.kubelet+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the kubelet's self-signed certificate
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(""); code != http.StatusUnauthorized {
		t.Errorf("/healthz without credentials: %d %q, want 401", code, body)
	}
	if code, body := get("not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("/healthz with a bad token: %d %q, want 401", code, body)
	}
	for _, tc := range []struct {
		sub  string
		code int
		body string
	}{
		{"healthz", http.StatusOK, "ok"},
		{"proxy", http.StatusOK, "ok"},
		{"configz", http.StatusForbidden, "Forbidden (user=system:serviceaccount:default:configz, verb=get, resource=nodes, subresource(s)=[healthz proxy])\n"},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			if _, err := client.Resource[api.ServiceAccount](n.c).Namespace("default").Create(ctx, &api.ServiceAccount{
				ObjectMeta: api.ObjectMeta{Namespace: "default", Name: tc.sub}}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Resource[api.ClusterRole](n.c).Create(ctx, &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "kubelet-" + tc.sub},
				Rules: []api.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/" + tc.sub}}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Resource[api.ClusterRoleBinding](n.c).Create(ctx, &api.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "kubelet-" + tc.sub},
				RoleRef:  api.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kubelet-" + tc.sub},
				Subjects: []api.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: tc.sub}}}); err != nil {
				t.Fatal(err)
			}
			b, err := n.c.Do(ctx, client.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/default/serviceaccounts/" + tc.sub + "/token",
				Body: []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)})
			if err != nil {
				t.Fatal(err)
			}
			var tr api.TokenRequest
			if err := json.Unmarshal(b, &tr); err != nil || tr.Status.Token == "" {
				t.Fatalf("token request: %v %s", err, b)
			}
			// The binding was made before the first request, so no
			// refusal is cached: the first answer is the final one.
			if code, body := get(tr.Status.Token); code != tc.code || body != tc.body {
				t.Errorf("/healthz with nodes/%s: %d %q, want %d %q", tc.sub, code, body, tc.code, tc.body)
			}
		})
	}
}
