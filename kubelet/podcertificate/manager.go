package podcertificate

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// The conditions a signer sets on a PodCertificateRequest.
const (
	ConditionIssued = "Issued"
	ConditionDenied = "Denied"
	ConditionFailed = "Failed"
)

// Client is the manager's view of the apiserver.
type Client interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*api.ServiceAccount, error)
	// Node returns the kubelet's own Node.
	Node(ctx context.Context) (*api.Node, error)
	CreateRequest(ctx context.Context, req *api.PodCertificateRequest) (*api.PodCertificateRequest, error)
	Request(ctx context.Context, namespace, name string) (*api.PodCertificateRequest, error)
}

// Recorder records the events of a pod.
type Recorder interface {
	Event(obj api.Object, eventType, reason, message string)
}

// key names one podCertificate source of one pod.
type key struct {
	podUID api.UID
	volume string
	index  int
}

// credentials are what a source has: the key and chain issued last (none
// before the first issuance), the request in flight with its key, or a
// permanent error.
type credentials struct {
	mu sync.Mutex

	keyPEM, chain  []byte
	beginRefreshAt time.Time

	pending    string // the request waiting for the signer
	pendingKey []byte

	permanent error
}

// Manager issues and refreshes the certificates of the node's pods.
type Manager struct {
	client Client
	rec    Recorder
	log    *slog.Logger
	// Now is the clock (tests move it).
	Now func() time.Time

	mu    sync.Mutex
	creds map[key]*credentials
}

// NewManager returns a manager asking c for certificates.
func NewManager(c Client, rec Recorder, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.Default()
	}
	return &Manager{client: c, rec: rec, log: log, Now: time.Now, creds: map[key]*credentials{}}
}

// PodCertificate returns the PEM private key and certificate chain of
// source index of the pod's projected volume: it creates the first
// request when there is none, reads the pending one, and starts a refresh
// once beginRefreshAt has passed. Until the first chain is issued it
// returns an error (the volume set-up is retried).
func (m *Manager) PodCertificate(ctx context.Context, pod *api.Pod, volume string, index int, src *api.PodCertificateProjection) ([]byte, []byte, error) {
	k := key{podUID: pod.UID, volume: volume, index: index}
	m.mu.Lock()
	c := m.creds[k]
	if c == nil {
		c = &credentials{}
		m.creds[k] = c
	}
	m.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.permanent != nil {
		return nil, nil, c.permanent
	}
	issued := c.chain != nil
	if c.pending == "" && (!issued || !m.Now().Before(c.beginRefreshAt)) {
		if err := m.request(ctx, pod, src, c); err != nil {
			if issued {
				// The current credentials stay valid until notAfter.
				m.log.Warn("refresh pod certificate", "pod", pod.Namespace+"/"+pod.Name, "volume", volume, "err", err)
				return c.keyPEM, c.chain, nil
			}
			return nil, nil, fmt.Errorf("while creating initial PodCertificateRequest: %w", err)
		}
	}
	if c.pending != "" {
		if err := m.check(ctx, pod, c); err != nil {
			return nil, nil, err
		}
	}
	if c.chain == nil {
		return nil, nil, fmt.Errorf("credential bundle is not issued yet")
	}
	return c.keyPEM, c.chain, nil
}

// request creates a PodCertificateRequest for a new key of src's type.
func (m *Manager) request(ctx context.Context, pod *api.Pod, src *api.PodCertificateProjection, c *credentials) error {
	saName := pod.Spec.ServiceAccountName
	if saName == "" {
		saName = "default"
	}
	sa, err := m.client.ServiceAccount(ctx, pod.Namespace, saName)
	if err != nil {
		return fmt.Errorf("while fetching service account: %w", err)
	}
	node, err := m.client.Node(ctx)
	if err != nil {
		return fmt.Errorf("while getting node object: %w", err)
	}
	priv, stub, err := generateKeyAndProof(src.KeyType)
	if err != nil {
		return fmt.Errorf("while generating keypair: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("while PEM-encoding private key: while marshaling key to PKCS#8: %w", err)
	}
	req := &api.PodCertificateRequest{
		ObjectMeta: api.ObjectMeta{Namespace: pod.Namespace, GenerateName: "req-",
			OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: api.PodCertificateRequestSpec{
			SignerName: src.SignerName, PodName: pod.Name, PodUID: pod.UID,
			ServiceAccountName: saName, ServiceAccountUID: sa.UID,
			NodeName: node.Name, NodeUID: node.UID,
			MaxExpirationSeconds: src.MaxExpirationSeconds, StubPKCS10Request: stub,
			UnverifiedUserAnnotations: src.UserAnnotations,
		},
	}
	created, err := m.client.CreateRequest(ctx, req)
	if err != nil {
		return fmt.Errorf("while creating on API: %w", err)
	}
	c.pending, c.pendingKey = created.Name, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return nil
}

// check reads the pending request: issued, its chain replaces the
// credentials; denied or failed, the source fails for good (kept
// credentials aside); deleted, the next call asks again.
func (m *Manager) check(ctx context.Context, pod *api.Pod, c *credentials) error {
	req, err := m.client.Request(ctx, pod.Namespace, c.pending)
	if apierrors.IsNotFound(err) {
		name := c.pending
		c.pending, c.pendingKey = "", nil
		if c.chain != nil {
			return nil
		}
		return fmt.Errorf("PodCertificateRequest %q appears to have been deleted", pod.Namespace+"/"+name)
	}
	if err != nil {
		if c.chain != nil {
			return nil
		}
		return fmt.Errorf("while getting PodCertificateRequest %q: %w", pod.Namespace+"/"+c.pending, err)
	}
	for _, cond := range req.Status.Conditions {
		switch cond.Type {
		case ConditionDenied, ConditionFailed:
			verb := "denied"
			if cond.Type == ConditionFailed {
				verb = "failed"
			}
			m.rec.Event(pod, api.EventTypeWarning, cond.Type,
				fmt.Sprintf("PodCertificateRequest %s was %s, reason=%q, message=%q", req.Namespace+"/"+req.Name, verb, cond.Reason, cond.Message))
			c.pending, c.pendingKey = "", nil
			if c.chain == nil {
				c.permanent = fmt.Errorf("PodCertificateRequest was permanently %s: reason=%q message=%q", verb, cond.Reason, cond.Message)
				return c.permanent
			}
			// A refused refresh: the issued credentials serve until they
			// expire; no new request is made.
			c.beginRefreshAt = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
			return nil
		case ConditionIssued:
			if cond.Status != api.ConditionTrue {
				continue
			}
			c.keyPEM, c.chain = c.pendingKey, cleanCertificateChain([]byte(req.Status.CertificateChain))
			c.beginRefreshAt = time.Time{}
			if req.Status.BeginRefreshAt != nil {
				c.beginRefreshAt = req.Status.BeginRefreshAt.Time
			}
			c.pending, c.pendingKey = "", nil
			return nil
		}
	}
	return nil
}

// Forget drops the credentials of a pod that is gone.
func (m *Manager) Forget(podUID api.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.creds {
		if k.podUID == podUID {
			delete(m.creds, k)
		}
	}
}

// generateKeyAndProof makes a key of keyType and a stub PKCS#10 request
// signed with it, as kube's kubelet.
func generateKeyAndProof(keyType string) (crypto.Signer, []byte, error) {
	var priv crypto.Signer
	var err error
	switch keyType {
	case "RSA3072":
		priv, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		priv, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("while generating %s key: %w", keyType, err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		return nil, nil, fmt.Errorf("while generating stub PKCS#10 request: %w", err)
	}
	return priv, stub, nil
}

// cleanCertificateChain keeps the chain's CERTIFICATE blocks alone,
// without headers or text between them.
func cleanCertificateChain(in []byte) []byte {
	var out bytes.Buffer
	for {
		var b *pem.Block
		if b, in = pem.Decode(in); b == nil {
			break
		}
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes}))
	}
	return out.Bytes()
}
