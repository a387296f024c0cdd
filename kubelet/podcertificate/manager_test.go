package podcertificate

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// fakeClient keeps the requests it was asked to create; tests play the
// signer by writing their status.
type fakeClient struct {
	mu   sync.Mutex
	reqs map[string]*api.PodCertificateRequest
	n    int
}

func (c *fakeClient) ServiceAccount(_ context.Context, ns, name string) (*api.ServiceAccount, error) {
	return &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns, UID: "sa-uid"}}, nil
}

func (c *fakeClient) Node(context.Context) (*api.Node, error) {
	return &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-1", UID: "node-uid"}}, nil
}

func (c *fakeClient) CreateRequest(_ context.Context, req *api.PodCertificateRequest) (*api.PodCertificateRequest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	out := *req
	out.Name = fmt.Sprintf("%s%d", req.GenerateName, c.n)
	c.reqs[out.Name] = &out
	return &out, nil
}

func (c *fakeClient) Request(_ context.Context, _, name string) (*api.PodCertificateRequest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reqs[name]
	if !ok {
		return nil, apierrors.NewNotFound(apierrors.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}, name)
	}
	cp := *r
	return &cp, nil
}

// sign issues request name: the chain, with text and a header to clean,
// and beginRefreshAt.
func (c *fakeClient) sign(name, chain string, refresh time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reqs[name]
	r.Status.Conditions = []api.Condition{{Type: ConditionIssued, Status: api.ConditionTrue, Reason: "Signed"}}
	r.Status.CertificateChain = "leading text\n" + chain
	r.Status.BeginRefreshAt = &api.Time{Time: refresh}
}

func (c *fakeClient) deny(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs[name].Status.Conditions = []api.Condition{{Type: ConditionDenied, Status: api.ConditionTrue, Reason: "Policy", Message: "no"}}
}

type recorded struct{ events []string }

func (r *recorded) Event(_ api.Object, typ, reason, msg string) {
	r.events = append(r.events, typ+" "+reason+" "+msg)
}

func pemBlock(typ, body string) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: []byte(body)}))
}

func TestPodCertificateIssueAndRefresh(t *testing.T) {
	t.Parallel()
	c := &fakeClient{reqs: map[string]*api.PodCertificateRequest{}}
	rec := &recorded{}
	m := NewManager(c, rec, nil)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.Now = func() time.Time { return now }
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "shop", UID: "pod-uid"}, Spec: api.PodSpec{ServiceAccountName: "builder"}}
	src := &api.PodCertificateProjection{SignerName: "example.com/signer", KeyType: "ECDSAP256",
		UserAnnotations: map[string]string{"spiffe/path-overriding": "/w"}}
	ctx := context.Background()

	if _, _, err := m.PodCertificate(ctx, pod, "tls", 0, src); err == nil || err.Error() != "credential bundle is not issued yet" {
		t.Fatalf("before issuance: %v", err)
	}
	req := c.reqs["req-1"]
	if req == nil || len(c.reqs) != 1 {
		t.Fatalf("requests %v", c.reqs)
	}
	// The request names the pod, its service account and the node, and
	// proves possession of the key.
	s := req.Spec
	if s.SignerName != "example.com/signer" || s.PodName != "web" || s.PodUID != "pod-uid" || s.ServiceAccountName != "builder" ||
		s.ServiceAccountUID != "sa-uid" || s.NodeName != "node-1" || s.NodeUID != "node-uid" || s.MaxExpirationSeconds != nil ||
		s.UnverifiedUserAnnotations["spiffe/path-overriding"] != "/w" || req.Namespace != "shop" ||
		len(req.OwnerReferences) != 1 || req.OwnerReferences[0].UID != "pod-uid" || req.OwnerReferences[0].Kind != "Pod" {
		t.Errorf("request %+v %+v", req.ObjectMeta, s)
	}
	csr, err := x509.ParseCertificateRequest(s.StubPKCS10Request)
	if err != nil || csr.CheckSignature() != nil || csr.PublicKeyAlgorithm != x509.ECDSA {
		t.Fatalf("stub request: %v", err)
	}
	// Still pending: no second request.
	if _, _, err := m.PodCertificate(ctx, pod, "tls", 0, src); err == nil || len(c.reqs) != 1 {
		t.Fatalf("pending: %v, %d requests", err, len(c.reqs))
	}

	chain := pemBlock("CERTIFICATE", "leaf") + pemBlock("CERTIFICATE", "intermediate")
	c.sign("req-1", chain, now.Add(time.Hour))
	key, got, err := m.PodCertificate(ctx, pod, "tls", 0, src)
	if err != nil || string(got) != chain {
		t.Fatalf("issued: %v %q", err, got)
	}
	blk, _ := pem.Decode(key)
	priv, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil || blk.Type != "PRIVATE KEY" {
		t.Fatalf("key: %v", err)
	}
	if !priv.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(csr.PublicKey) {
		t.Error("the key is not the one the request proved")
	}

	// At beginRefreshAt a new key is asked for; the old credentials serve
	// until it is issued.
	now = now.Add(time.Hour)
	k2, c2, err := m.PodCertificate(ctx, pod, "tls", 0, src)
	if err != nil || string(k2) != string(key) || string(c2) != chain || len(c.reqs) != 2 {
		t.Fatalf("refresh pending: %v, %d requests", err, len(c.reqs))
	}
	chain2 := pemBlock("CERTIFICATE", "leaf2")
	c.sign("req-2", chain2, now.Add(time.Hour))
	k3, c3, err := m.PodCertificate(ctx, pod, "tls", 0, src)
	if err != nil || string(c3) != chain2 || string(k3) == string(key) {
		t.Fatalf("refreshed: %v %q", err, c3)
	}

	// Another source of the pod is its own request; a denied one fails for
	// good with a Warning event.
	if _, _, err := m.PodCertificate(ctx, pod, "tls", 1, src); err == nil {
		t.Fatal("second source issued at once")
	}
	c.deny("req-3")
	_, _, err = m.PodCertificate(ctx, pod, "tls", 1, src)
	if want := `PodCertificateRequest was permanently denied: reason="Policy" message="no"`; err == nil || err.Error() != want {
		t.Fatalf("denied: %v", err)
	}
	if _, _, err = m.PodCertificate(ctx, pod, "tls", 1, src); err == nil || len(c.reqs) != 3 {
		t.Errorf("after denial: %v, %d requests", err, len(c.reqs))
	}
	if len(rec.events) != 1 || !strings.HasPrefix(rec.events[0], `Warning Denied PodCertificateRequest shop/req-3 was denied, reason="Policy", message="no"`) {
		t.Errorf("events %q", rec.events)
	}

	// A forgotten pod starts over.
	m.Forget("pod-uid")
	if _, _, err := m.PodCertificate(ctx, pod, "tls", 0, src); err == nil || len(c.reqs) != 4 {
		t.Errorf("after Forget: %v, %d requests", err, len(c.reqs))
	}
}

func TestGenerateKeyAndProof(t *testing.T) {
	t.Parallel()
	for _, kt := range []string{"RSA3072", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"} {
		_, stub, err := generateKeyAndProof(kt)
		if err != nil {
			t.Fatalf("%s: %v", kt, err)
		}
		if csr, err := x509.ParseCertificateRequest(stub); err != nil || csr.CheckSignature() != nil {
			t.Errorf("%s: stub request %v", kt, err)
		}
	}
	if _, _, err := generateKeyAndProof("DSA"); err == nil || err.Error() != `unknown key type "DSA"` {
		t.Errorf("DSA: %v", err)
	}
}
