package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/pki"
)

// TestNodeJoin is the join flow of a node agent on another machine: it has
// only the server address, a bootstrap token and the CA hash; it pins the
// CA, files a CSR with the token, gets it approved and signed, and then acts
// as system:node:NAME with its own certificate.
func TestNodeJoin(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	id, secret := pki.GenerateBootstrapToken()
	tok, err := pki.BootstrapTokenSecret(id, secret, time.Hour, []string{pki.BootstrapDefaultNodeGroup}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	admin.must(201, "POST", "/api/v1/namespaces/kube-system/secrets", tok)
	caHash := s.PKI().CA.Hash()
	base := s.SecureURL()

	// The joining node: pin the CA by its hash.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	caPEM, err := pki.FetchPinnedCA(ctx, base, caHash)
	if err != nil {
		t.Fatalf("fetch pinned CA: %v", err)
	}
	if _, err := pki.FetchPinnedCA(ctx, base, "sha256:"+strings.Repeat("0", 64)); err == nil {
		t.Fatal("a wrong CA hash was accepted")
	}
	boot := tlsClient(t, caPEM, nil)
	bearer := "Bearer " + id + "." + secret
	csrPEM, keyPEM, err := pki.NewCSR(pki.NodeUser("node-j"), []string{pki.NodesGroup})
	if err != nil {
		t.Fatal(err)
	}
	usages := []api.KeyUsage{}
	for _, u := range pki.KubeletClientUsages {
		usages = append(usages, api.KeyUsage(u))
	}
	body, _ := json.Marshal(api.CertificateSigningRequest{
		TypeMeta:   api.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: api.ObjectMeta{Name: "node-csr-j"},
		Spec: api.CertificateSigningRequestSpec{Request: csrPEM, SignerName: "kubernetes.io/kube-apiserver-client-kubelet",
			Usages: usages, Username: "someone-else"},
	})
	const csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	var created api.CertificateSigningRequest
	waitFor(t, 5*time.Second, func() bool {
		code, out := do(t, boot, "POST", base+csrs, body, bearer)
		_ = json.Unmarshal(out, &created)
		return code == 201
	})
	if created.Spec.Username != "system:bootstrap:"+id {
		t.Fatalf("CSR requester = %q, want the token's user", created.Spec.Username)
	}
	// The token can do nothing else.
	if code, _ := do(t, boot, "GET", base+"/api/v1/namespaces/default/pods", nil, bearer); code != 403 {
		t.Fatalf("bootstrap token listing pods: %d", code)
	}
	var got api.CertificateSigningRequest
	waitFor(t, 10*time.Second, func() bool {
		code, out := do(t, boot, "GET", base+csrs+"/node-csr-j", nil, bearer)
		got = api.CertificateSigningRequest{}
		return code == 200 && json.Unmarshal(out, &got) == nil && len(got.Status.Certificate) > 0
	})
	approved := false
	for _, c := range got.Status.Conditions {
		approved = approved || (c.Type == api.CertificateApproved && c.Status == api.ConditionTrue)
	}
	if !approved {
		t.Fatalf("signed but not approved: %+v", got.Status.Conditions)
	}

	// The node's own identity works, and only for itself.
	cert, err := tls.X509KeyPair(got.Status.Certificate, keyPEM)
	if err != nil {
		t.Fatalf("issued certificate: %v", err)
	}
	kubelet := tlsClient(t, caPEM, &cert)
	if code, out := do(t, kubelet, "POST", base+"/api/v1/nodes", []byte(`{"metadata":{"name":"node-j"}}`), ""); code != 201 {
		t.Fatalf("node-j registers: %d %s", code, out)
	}
	admin.must(201, "POST", "/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": "node-other"}})
	if code, _ := do(t, kubelet, "PUT", base+"/api/v1/nodes/node-other", []byte(`{"metadata":{"name":"node-other"}}`), ""); code != 403 {
		t.Fatalf("node-j updating node-other: %d", code)
	}
}

func do(t *testing.T, hc *http.Client, method, url string, body []byte, auth string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
