package bootstrap

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
)

// ServingCurrentFile is the issued serving certificate and key under
// <root-dir>/pki, kube's name (kubelet-server-TIMESTAMP.pem it links to).
const ServingCurrentFile = "kubelet-server-current.pem"

// ServingConfig configures a ServingManager.
type ServingConfig struct {
	// Client files and reads the CertificateSigningRequests, as the node.
	Client   *client.Client
	NodeName string
	// RootDir is --root-dir; the certificate goes to RootDir/pki.
	RootDir string
	// WaitForNode returns the Node as the kubelet last saw it once cond
	// holds (nodestatus.Manager.WaitForNode): its status.addresses are the
	// names the certificate is requested for.
	WaitForNode func(ctx context.Context, cond func(*api.Node) bool) (*api.Node, error)
	// Fallback is served until a certificate is issued: the self-signed
	// one (EnsureServingCert) or --tls-cert-file's.
	Fallback tls.Certificate
	// Timeout bounds waiting for one request to be signed, after which a
	// new one is filed (default 15 minutes, kube's).
	Timeout time.Duration
	// RetryMax caps the back-off between failed requests (default 5 minutes).
	RetryMax time.Duration
	Logger   *slog.Logger
}

// ServingManager is the kubelet's serving certificate with
// serverTLSBootstrap (--rotate-server-certificates), as kube's
// certificate manager for the kubernetes.io/kubelet-serving signer: it
// requests a certificate for CN=system:node:NAME, O=system:nodes and the
// Node's addresses (DNS and IP subject alternative names, at least one
// IP), serves it through GetCertificate from the moment it is issued,
// without a restart, and requests a new one at 70 to 90 % of its lifetime
// or as soon as the Node's addresses are no longer exactly its names.
// Until a certificate is issued it serves the fallback (Kubernetes'
// kubelet refuses the handshake instead).
type ServingManager struct {
	cfg ServingConfig
	cur atomic.Pointer[servingCert]
}

// servingCert is a certificate being served.
type servingCert struct {
	cert *tls.Certificate
	// issued is false for the fallback; renewAt is when an issued one is
	// replaced.
	issued  bool
	renewAt time.Time
}

// NewServingManager returns a manager serving the certificate issued
// before (RootDir/pki/kubelet-server-current.pem) while it is valid, or
// else the fallback.
func NewServingManager(cfg ServingConfig) (*ServingManager, error) {
	if cfg.Client == nil || cfg.WaitForNode == nil || cfg.NodeName == "" {
		return nil, errors.New("serving certificate manager: a client, the node name and its Node are required")
	}
	if len(cfg.Fallback.Certificate) == 0 {
		return nil, errors.New("serving certificate manager: a fallback certificate is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Minute
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &ServingManager{cfg: cfg}
	fallback := cfg.Fallback
	m.cur.Store(&servingCert{cert: &fallback})
	path := filepath.Join(cfg.RootDir, "pki", ServingCurrentFile)
	switch data, err := os.ReadFile(path); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		c, err := issuedCert(data)
		if err != nil {
			cfg.Logger.Warn("ignoring the serving certificate issued before", "file", path, "err", err)
		} else if time.Now().Before(c.cert.Leaf.NotAfter) {
			m.cur.Store(c)
		}
	}
	return m, nil
}

// issuedCert parses a PEM file holding an issued certificate (and its
// chain) and its key.
func issuedCert(data []byte) (*servingCert, error) {
	c, err := tls.X509KeyPair(data, data)
	if err != nil {
		return nil, err
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &servingCert{cert: &c, issued: true, renewAt: renewAt(c.Leaf)}, nil
}

// renewAt is a random point between 70 and 90 % of the certificate's
// lifetime, as kube's certificate manager picks (nextRotationDeadline).
func renewAt(leaf *x509.Certificate) time.Time {
	total := leaf.NotAfter.Sub(leaf.NotBefore)
	n, err := rand.Int(rand.Reader, big.NewInt(1000))
	frac := 0.8
	if err == nil {
		frac = 0.7 + 0.2*float64(n.Int64())/1000
	}
	return leaf.NotBefore.Add(time.Duration(float64(total) * frac))
}

// GetCertificate is tls.Config.GetCertificate: the current certificate.
func (m *ServingManager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return m.cur.Load().cert, nil
}

// Issued reports whether the certificate served was issued by the
// cluster (not the fallback).
func (m *ServingManager) Issued() bool { return m.cur.Load().issued }

// Run requests certificates until ctx ends: when none was issued, when
// the Node's addresses no longer match the served one's names, and when
// it is due for renewal. A request denied, failed or not signed within
// Timeout is filed again after a back-off.
func (m *ServingManager) Run(ctx context.Context) error {
	log := m.cfg.Logger
	backoff := 2 * time.Second
	for ctx.Err() == nil {
		cur := m.cur.Load()
		// Wait for a reason to request: addresses to request for that the
		// current certificate does not carry, or its renewal time.
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if cur.issued {
			wctx, cancel = context.WithDeadline(ctx, cur.renewAt)
		}
		node, err := m.cfg.WaitForNode(wctx, func(n *api.Node) bool {
			dns, ips := servingNames(n)
			return len(ips) > 0 && (!cur.issued || !sameNames(cur.cert.Leaf, dns, ips))
		})
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			// Due for renewal: for the addresses the Node has now.
			if node, err = m.cfg.WaitForNode(ctx, func(n *api.Node) bool { _, ips := servingNames(n); return len(ips) > 0 }); err != nil {
				return nil
			}
		}
		dns, ips := servingNames(node)
		c, err := m.request(ctx, dns, ips)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Warn("kubelet serving certificate request failed", "err", err, "retry", backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, m.cfg.RetryMax)
			continue
		}
		backoff = 2 * time.Second
		m.cur.Store(c)
		log.Info("serving the issued kubelet serving certificate", "dns", dns, "ips", ips,
			"expires", c.cert.Leaf.NotAfter.UTC().Format(time.RFC3339), "renewAt", c.renewAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// request files a kubelet-serving CSR for the names with a new key, waits
// for its certificate and installs it as kubelet-server-current.pem.
func (m *ServingManager) request(ctx context.Context, dns []string, ips []net.IP) (*servingCert, error) {
	key, err := pki.NewPrivateKey()
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: pki.NodeUser(m.cfg.NodeName), Organization: []string{pki.NodesGroup}},
		DNSNames: dns, IPAddresses: ips,
	}, key)
	if err != nil {
		return nil, err
	}
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: pki.CertificateRequestBlockType, Bytes: der})
	keyPEM, err := pki.EncodeKeyPEM(key)
	if err != nil {
		return nil, err
	}
	csrs := client.Resource[api.CertificateSigningRequest](m.cfg.Client)
	created, err := csrs.Create(ctx, &api.CertificateSigningRequest{
		TypeMeta:   api.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: api.ObjectMeta{GenerateName: "csr-"},
		Spec: api.CertificateSigningRequestSpec{Request: csrPEM, SignerName: api.KubeletServingSignerName,
			// An ECDSA key: no key encipherment (kube's DefaultKubeletServingGetUsages).
			Usages: []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth}},
	})
	if err != nil {
		return nil, fmt.Errorf("create certificate signing request: %w", err)
	}
	m.cfg.Logger.Info("waiting for the kubelet serving certificate", "csr", created.Name, "dns", dns, "ips", ips)
	certPEM, err := waitForCertificate(ctx, csrs, created.Name, csrPEM, m.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	c, err := issuedCert(append(append([]byte{}, certPEM...), keyPEM...))
	if err != nil {
		return nil, fmt.Errorf("issued certificate of %s: %w", created.Name, err)
	}
	dir := filepath.Join(m.cfg.RootDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if _, err := installCurrent(dir, "kubelet-server", certPEM, keyPEM); err != nil {
		return nil, err
	}
	return c, nil
}

// servingNames are the DNS names and IPs of a Node's addresses, sorted,
// as kube's kubelet requests them (addressesToHostnamesAndIPs): a
// Hostname is a DNS name unless it is an IP, Internal/ExternalDNS are DNS
// names, Internal/ExternalIP are IPs.
func servingNames(n *api.Node) (dns []string, ips []net.IP) {
	seenDNS, seenIP := map[string]bool{}, map[string]bool{}
	for _, a := range n.Status.Addresses {
		if a.Address == "" {
			continue
		}
		ip := net.ParseIP(a.Address)
		switch a.Type {
		case api.NodeHostName:
			if ip != nil {
				seenIP[ip.String()] = true
			} else {
				seenDNS[a.Address] = true
			}
		case api.NodeInternalIP, api.NodeExternalIP:
			if ip != nil {
				seenIP[ip.String()] = true
			}
		case api.NodeInternalDNS, api.NodeExternalDNS:
			seenDNS[a.Address] = true
		}
	}
	for d := range seenDNS {
		dns = append(dns, d)
	}
	sort.Strings(dns)
	var ipStrings []string
	for s := range seenIP {
		ipStrings = append(ipStrings, s)
	}
	sort.Strings(ipStrings)
	for _, s := range ipStrings {
		ips = append(ips, net.ParseIP(s))
	}
	return dns, ips
}

// sameNames reports whether the certificate's DNS and IP names are
// exactly dns and ips (kube's certSatisfiesTemplate).
func sameNames(leaf *x509.Certificate, dns []string, ips []net.IP) bool {
	if leaf == nil {
		return false
	}
	gotDNS := slices.Sorted(slices.Values(leaf.DNSNames))
	if !slices.Equal(gotDNS, dns) || len(leaf.IPAddresses) != len(ips) {
		return false
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}
