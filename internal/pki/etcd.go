package pki

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The etcd PKI in kubeadm's layout, relative to the certificate directory:
// its own CA (etcd trusts no other), the server and peer certificates of
// the member, the client certificate of health checks and etcdctl, and the
// apiserver's client certificate beside the apiserver's other files.
const (
	EtcdDir                       = "etcd"
	EtcdCACertFile                = "etcd/ca.crt"
	EtcdCAKeyFile                 = "etcd/ca.key"
	EtcdServerCertFile            = "etcd/server.crt"
	EtcdServerKeyFile             = "etcd/server.key"
	EtcdPeerCertFile              = "etcd/peer.crt"
	EtcdPeerKeyFile               = "etcd/peer.key"
	EtcdHealthcheckClientCertFile = "etcd/healthcheck-client.crt"
	EtcdHealthcheckClientKeyFile  = "etcd/healthcheck-client.key"
	APIServerEtcdClientCertFile   = "apiserver-etcd-client.crt"
	APIServerEtcdClientKeyFile    = "apiserver-etcd-client.key"
)

// Subjects of what EnsureEtcd creates, kubeadm's.
const (
	EtcdCACommonName              = "etcd-ca"
	EtcdHealthcheckClientUser     = "kube-etcd-healthcheck-client"
	APIServerEtcdClientUser       = "kube-apiserver-etcd-client"
	etcdMemberFallbackCommonName  = "minik8s-etcd"
	etcdHealthcheckClientBaseName = "healthcheck-client"
	apiServerEtcdClientBaseName   = "apiserver-etcd-client"
)

// EtcdOptions are the addresses the etcd member is reached at besides
// localhost, 127.0.0.1, ::1 and this host's name, which it always holds.
type EtcdOptions struct {
	// IPs are more addresses of the member (its listen or advertise
	// addresses); unspecified addresses (0.0.0.0, ::) are left out.
	IPs []net.IP
	// DNSNames are more names of the member.
	DNSNames []string
}

// EtcdBundle is what EnsureEtcd found or created.
type EtcdBundle struct {
	// Dir is the certificate directory (the files are relative to it).
	Dir string
	// CA is the etcd CA, which signs every other certificate here and is
	// the only issuer the member accepts client and peer certificates from.
	CA *CA
	// Written lists "FILE: reason" for every file written, as Bundle does.
	Written []string
}

// Path returns the path of a file of the bundle (one of the Etcd* and
// APIServerEtcdClient* names).
func (b *EtcdBundle) Path(name string) string { return filepath.Join(b.Dir, name) }

// EnsureEtcd makes certDir hold the etcd PKI in kubeadm's layout: the etcd
// CA (etcd/ca.crt|key, created only when both are missing), the member's
// server and peer certificates (etcd/server, etcd/peer: server and client
// auth, for the names in opts and the local ones), the health-check client
// (etcd/healthcheck-client, CN kube-etcd-healthcheck-client) and the
// apiserver's client (apiserver-etcd-client, CN kube-apiserver-etcd-client).
// What is there is reused; a certificate is re-issued under the same rules
// as EnsureServing's (missing, not of this CA, near expiry, lacking a name).
func EnsureEtcd(certDir string, opts EtcdOptions) (*EtcdBundle, error) {
	dnsNames, ips := etcdSANs(opts)
	if err := os.MkdirAll(filepath.Join(certDir, EtcdDir), 0o700); err != nil {
		return nil, fmt.Errorf("ensure etcd certificates: %w", err)
	}
	member := &Bundle{Dir: filepath.Join(certDir, EtcdDir)}
	var err error
	if member.CA, err = member.ensureCA(EtcdCACommonName); err != nil {
		return nil, fmt.Errorf("ensure etcd certificates in %s: %w", member.Dir, err)
	}
	cn := etcdMemberFallbackCommonName
	if h, err := os.Hostname(); err == nil && isDNSName(h) {
		cn = strings.ToLower(h)
	}
	for _, pair := range [][2]string{{EtcdServerCertFile, EtcdServerKeyFile}, {EtcdPeerCertFile, EtcdPeerKeyFile}} {
		if _, _, err := member.ensureServingPair(filepath.Base(pair[0]), filepath.Base(pair[1]), cn, dnsNames, ips, true); err != nil {
			return nil, fmt.Errorf("ensure etcd certificates in %s: %w", member.Dir, err)
		}
	}
	if _, _, err := member.EnsureClientCert(etcdHealthcheckClientBaseName, EtcdHealthcheckClientUser, nil); err != nil {
		return nil, fmt.Errorf("ensure etcd certificates in %s: %w", member.Dir, err)
	}
	apiserver := &Bundle{Dir: certDir, CA: member.CA}
	if _, _, err := apiserver.EnsureClientCert(apiServerEtcdClientBaseName, APIServerEtcdClientUser, nil); err != nil {
		return nil, fmt.Errorf("ensure etcd certificates in %s: %w", certDir, err)
	}
	b := &EtcdBundle{Dir: certDir, CA: member.CA}
	for _, w := range member.Written {
		b.Written = append(b.Written, EtcdDir+"/"+w)
	}
	b.Written = append(b.Written, apiserver.Written...)
	return b, nil
}

// etcdSANs are kubeadm's names of an etcd member: this host's name,
// localhost, 127.0.0.1, ::1, and the member's own addresses.
func etcdSANs(opts EtcdOptions) (dnsNames []string, ips []net.IP) {
	addIP := func(ip net.IP) {
		if ip != nil && !ip.IsUnspecified() && !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	addDNS := func(n string) {
		n = strings.ToLower(n)
		if isDNSName(n) && !slices.Contains(dnsNames, n) {
			dnsNames = append(dnsNames, n)
		}
	}
	addDNS("localhost")
	if h, err := os.Hostname(); err == nil {
		addDNS(h)
	}
	for _, n := range opts.DNSNames {
		addDNS(n)
	}
	addIP(net.IPv4(127, 0, 0, 1))
	addIP(net.IPv6loopback)
	for _, ip := range opts.IPs {
		addIP(ip)
	}
	return dnsNames, ips
}
