package app

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/csr"
	"github.com/minik8s/minik8s/apiserver/server"
	"github.com/minik8s/minik8s/internal/pki"
)

// The apiserver's client certificate for kubelets, kubeadm's names: the
// file apiserver-kubelet-client.crt|key in the cert dir, CN
// kube-apiserver-kubelet-client, O=system:masters (which the kubelet
// server admits).
const (
	KubeletClientCertName = "apiserver-kubelet-client"
	KubeletClientUser     = "kube-apiserver-kubelet-client"
)

// kubeletClientCert holds the certificate the apiserver presents to
// kubelets. It is filled once the certificates exist (after the handler is
// built), hence the indirection.
type kubeletClientCert struct {
	cert atomic.Pointer[tls.Certificate]
}

func (k *kubeletClientCert) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if c := k.cert.Load(); c != nil {
		return c, nil
	}
	// No certificate: the handshake goes on without one and the kubelet
	// answers 401, which is the truth.
	return &tls.Certificate{}, nil
}

// kubeletConfig builds how the handler reaches kubelets: the preferred
// address types, the client certificate from
// --kubelet-client-certificate/--kubelet-client-key (else the one
// ensureKubeletClientCert issues from the cluster CA), and the CA of
// --kubelet-certificate-authority that kubelets' serving certificates
// must chain to (unset: not verified, as in Kubernetes).
func (a *APIServer) kubeletConfig() (server.KubeletConfig, error) {
	var cfg server.KubeletConfig
	for _, t := range a.opts.KubeletPreferredAddressTypes {
		switch at := api.NodeAddressType(t); at {
		case api.NodeInternalIP, api.NodeHostName, api.NodeExternalIP, api.NodeInternalDNS, api.NodeExternalDNS:
			cfg.PreferredAddressTypes = append(cfg.PreferredAddressTypes, at)
		default:
			return cfg, fmt.Errorf("--kubelet-preferred-address-types: unknown address type %q", t)
		}
	}
	switch {
	case a.opts.KubeletClientCertificate != "" && a.opts.KubeletClientKey != "":
		c, err := tls.LoadX509KeyPair(a.opts.KubeletClientCertificate, a.opts.KubeletClientKey)
		if err != nil {
			return cfg, fmt.Errorf("--kubelet-client-certificate: %w", err)
		}
		a.kubeletCert.cert.Store(&c)
	case a.opts.KubeletClientCertificate != "" || a.opts.KubeletClientKey != "":
		return cfg, errors.New("--kubelet-client-certificate and --kubelet-client-key must be given together")
	}
	cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12, GetClientCertificate: a.kubeletCert.get}
	if f := a.opts.KubeletCertificateAuthority; f != "" {
		cfg.VerifyKubelets = true
		err := loadKubeletCA(cfg.TLS, f)
		// The cluster CA this apiserver makes in --cert-dir on its first
		// start is read once it exists (ensureKubeletClientCert), before
		// anything is served.
		if errors.Is(err, os.ErrNotExist) && (a.opts.SecurePort > 0 || a.opts.SecureListener != nil) && filepath.Clean(f) == filepath.Join(a.opts.CertDir, pki.CACertFile) {
			err = nil
		}
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// loadKubeletCA makes tc verify kubelets against the CA bundle in file.
func loadKubeletCA(tc *tls.Config, file string) error {
	pool, err := pki.ReadCAPool(file)
	if err != nil {
		return fmt.Errorf("--kubelet-certificate-authority: %w", err)
	}
	// Verified for the address dialled (server.KubeletConfig.TLS).
	tc.RootCAs = pool
	return nil
}

// ensureKubeletClientCert issues (or reuses) apiserver-kubelet-client in the
// cert dir when no certificate was given by flag, and reads
// --kubelet-certificate-authority when it names the cluster CA the
// bundle has just made (see kubeletConfig).
func (a *APIServer) ensureKubeletClientCert(b *pki.Bundle) error {
	if f := a.opts.KubeletCertificateAuthority; f != "" && a.kubeletCfg.TLS != nil && a.kubeletCfg.TLS.RootCAs == nil {
		if err := loadKubeletCA(a.kubeletCfg.TLS, f); err != nil {
			return err
		}
	}
	if a.kubeletCert.cert.Load() != nil {
		return nil
	}
	certPEM, keyPEM, err := b.EnsureClientCert(KubeletClientCertName, KubeletClientUser, []string{pki.MastersGroup})
	if err != nil {
		return fmt.Errorf("kubelet client certificate: %w", err)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("kubelet client certificate: %w", err)
	}
	a.kubeletCert.cert.Store(&c)
	return nil
}

// reservedServingNames are the names the kubelet serving approver refuses
// whatever a Node lists: the cluster domain, the Service ranges of
// --service-cluster-ip-range and this apiserver's own serving SANs.
func (a *APIServer) reservedServingNames() csr.ReservedNames {
	r := csr.ReservedNames{ClusterDomain: pki.ClusterDomain}
	for _, s := range strings.Split(a.opts.ServiceClusterIPRange, ",") {
		if _, n, err := net.ParseCIDR(strings.TrimSpace(s)); err == nil {
			r.ServiceCIDRs = append(r.ServiceCIDRs, n)
		}
	}
	if a.pki != nil {
		if b, _ := pem.Decode(a.pki.ServingCertPEM); b != nil {
			if c, err := x509.ParseCertificate(b.Bytes); err == nil {
				r.APIServerDNS, r.APIServerIPs = c.DNSNames, c.IPAddresses
			}
		}
	}
	return r
}
