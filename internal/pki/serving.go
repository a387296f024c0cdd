package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File names inside the certificate directory.
const (
	CACertFile      = "ca.crt"
	CAKeyFile       = "ca.key"
	ServingCertFile = "apiserver.crt"
	ServingKeyFile  = "apiserver.key"
	AdminCertFile   = "admin.crt"
	AdminKeyFile    = "admin.key"
)

// Names EnsureServing uses for what it creates.
const (
	// CACommonName is the subject of a generated cluster CA, kubeadm's.
	CACommonName = "kubernetes"
	// ServingCommonName is the subject of the apiserver's certificate.
	ServingCommonName = "kube-apiserver"
	// ClusterDomain is the DNS domain of in-cluster service names.
	ClusterDomain = "cluster.local"
)

// DefaultServiceIP is the first address of the default service CIDR
// 10.96.0.0/12, the ClusterIP of the "kubernetes" service.
var DefaultServiceIP = net.IPv4(10, 96, 0, 1)

// renewBefore is how close to expiry a certificate found on disk may be
// before EnsureServing replaces it on start.
const renewBefore = 30 * 24 * time.Hour

// ServingOptions are the names the apiserver is reachable under.
type ServingOptions struct {
	// AdvertiseAddress is the address other nodes reach the apiserver at
	// (--advertise-address); nil adds none.
	AdvertiseAddress net.IP
	// ExtraSANs are more IPs or DNS names (--tls-san).
	ExtraSANs []string
	// ServiceIP is the ClusterIP of the "kubernetes" service; nil means
	// DefaultServiceIP.
	ServiceIP net.IP
}

// Bundle is what EnsureServing found or created in Dir.
type Bundle struct {
	Dir string
	CA  *CA
	// ServingCertPEM is the apiserver's certificate alone (not the chain).
	ServingCertPEM, ServingKeyPEM []byte
	// AdminCertPEM and AdminKeyPEM authenticate as kubernetes-admin in
	// system:masters, for the admin kubeconfig.
	AdminCertPEM, AdminKeyPEM []byte
	// Written lists "FILE: reason" for every file this call (or a later
	// EnsureClientCert) wrote, for the caller to log.
	Written []string
}

// EnsureServing makes certDir hold a CA, an apiserver serving certificate
// and an admin client certificate, reusing what is there. The CA is created
// only when neither ca.crt nor ca.key exists; having only one of them is an
// error (it would silently fork the cluster's trust). The serving and admin
// certificates are re-issued from the CA when missing, unreadable, not
// signed by the CA, not matching their key, close to expiry, or (serving)
// lacking one of the required names: the advertise address, the extra SANs,
// localhost, 127.0.0.1, this host's name, kubernetes,
// kubernetes.default, kubernetes.default.svc,
// kubernetes.default.svc.cluster.local and the service IP. Keys are written
// 0600, certificates 0644, each file atomically; a crash between a
// certificate and its key leaves a mismatched pair that the next start
// detects and replaces.
func EnsureServing(certDir string, opts ServingOptions) (*Bundle, error) {
	dnsNames, ips, err := servingSANs(opts)
	if err != nil {
		return nil, fmt.Errorf("ensure serving certificates: %w", err)
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, fmt.Errorf("ensure serving certificates: %w", err)
	}
	b := &Bundle{Dir: certDir}
	if b.CA, err = b.ensureCA(CACommonName); err != nil {
		return nil, fmt.Errorf("ensure serving certificates in %s: %w", certDir, err)
	}
	if b.ServingCertPEM, b.ServingKeyPEM, err = b.ensureServing(dnsNames, ips); err != nil {
		return nil, fmt.Errorf("ensure serving certificates in %s: %w", certDir, err)
	}
	if b.AdminCertPEM, b.AdminKeyPEM, err = b.EnsureClientCert("admin", AdminUser, []string{MastersGroup}); err != nil {
		return nil, fmt.Errorf("ensure serving certificates in %s: %w", certDir, err)
	}
	return b, nil
}

// Path returns the path of name inside the bundle's directory.
func (b *Bundle) Path(name string) string { return filepath.Join(b.Dir, name) }

// ServingCertificate returns the serving key pair with the CA appended to the
// chain, so a joining kubelet can check the CA against its pinned hash during
// the handshake (FetchPinnedCA).
func (b *Bundle) ServingCertificate() (tls.Certificate, error) {
	chain := append(slices.Clone(b.ServingCertPEM), b.CA.CertPEM()...)
	c, err := tls.X509KeyPair(chain, b.ServingKeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("serving key pair: %w", err)
	}
	return c, nil
}

// ServerTLSConfig is the apiserver's TLS configuration: the serving chain,
// client certificates verified against the cluster CA when given (so that
// anonymous requests still reach /healthz and get a 401 elsewhere rather
// than a handshake failure), TLS 1.2 at least.
func (b *Bundle) ServerTLSConfig() (*tls.Config, error) {
	c, err := b.ServingCertificate()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{c},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    b.CA.Pool(),
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// EnsureClientCert makes NAME.crt and NAME.key in the bundle's directory a
// client certificate for user in groups (compared as a set), reusing a valid
// one. The scheduler and controller-manager use it through
// EnsureSchedulerCert and EnsureControllerManagerCert.
func (b *Bundle) EnsureClientCert(name, user string, groups []string) (certPEM, keyPEM []byte, err error) {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return nil, nil, fmt.Errorf("client certificate file name %q must be a plain file name", name)
	}
	certFile, keyFile := name+".crt", name+".key"
	reason := b.reuse(certFile, keyFile, x509.ExtKeyUsageClientAuth, func(c *x509.Certificate) error {
		if c.Subject.CommonName != user {
			return fmt.Errorf("is for user %q, want %q", c.Subject.CommonName, user)
		}
		if !sameSet(c.Subject.Organization, groups) {
			return fmt.Errorf("has groups %q, want %q", c.Subject.Organization, groups)
		}
		return nil
	})
	if reason == nil {
		return b.read(certFile, keyFile)
	}
	certPEM, keyPEM, err = b.CA.IssueClient(user, groups, DefaultCertValidity)
	if err != nil {
		return nil, nil, err
	}
	if err := b.writePair(certFile, keyFile, certPEM, keyPEM, reason); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// EnsureSchedulerCert is EnsureClientCert for system:kube-scheduler
// (scheduler.crt, scheduler.key).
func (b *Bundle) EnsureSchedulerCert() (certPEM, keyPEM []byte, err error) {
	return b.EnsureClientCert("scheduler", SchedulerUser, nil)
}

// EnsureControllerManagerCert is EnsureClientCert for
// system:kube-controller-manager (controller-manager.crt, .key).
func (b *Bundle) EnsureControllerManagerCert() (certPEM, keyPEM []byte, err error) {
	return b.EnsureClientCert("controller-manager", ControllerManagerUser, nil)
}

// ensureCA loads ca.crt and ca.key from the bundle's directory, or creates
// a CA named commonName when neither exists.
func (b *Bundle) ensureCA(commonName string) (*CA, error) {
	certPath, keyPath := b.Path(CACertFile), b.Path(CAKeyFile)
	certOK, err := exists(certPath)
	if err != nil {
		return nil, err
	}
	keyOK, err := exists(keyPath)
	if err != nil {
		return nil, err
	}
	switch {
	case certOK && keyOK:
		ca, err := LoadCA(certPath, keyPath)
		if err != nil {
			return nil, err
		}
		if !time.Now().Before(ca.Cert.NotAfter) {
			return nil, fmt.Errorf("CA certificate %s expired at %s; a new CA means new credentials for every client",
				certPath, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
		}
		return ca, nil
	case certOK != keyOK:
		present, missing := certPath, keyPath
		if keyOK {
			present, missing = keyPath, certPath
		}
		return nil, fmt.Errorf("%s exists but %s does not: provide both or neither", present, missing)
	}
	ca, err := NewCA(commonName, DefaultCAValidity)
	if err != nil {
		return nil, err
	}
	if err := ca.WriteFiles(b.Dir); err != nil {
		return nil, err
	}
	b.Written = append(b.Written, CACertFile+": created", CAKeyFile+": created")
	return ca, nil
}

func (b *Bundle) ensureServing(dnsNames []string, ips []net.IP) (certPEM, keyPEM []byte, err error) {
	return b.ensureServingPair(ServingCertFile, ServingKeyFile, ServingCommonName, dnsNames, ips, false)
}

// ensureServingPair makes certFile and keyFile a serving certificate for
// the given names (and, with peer, a client one too: IssuePeer), reusing a
// valid one that holds every name.
func (b *Bundle) ensureServingPair(certFile, keyFile, cn string, dnsNames []string, ips []net.IP, peer bool) (certPEM, keyPEM []byte, err error) {
	reason := b.reuse(certFile, keyFile, x509.ExtKeyUsageServerAuth, func(c *x509.Certificate) error {
		if missing := missingSANs(c, dnsNames, ips); len(missing) > 0 {
			return fmt.Errorf("lacks subject alternative names %q", missing)
		}
		if peer && !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
			return errors.New("lacks the client auth usage")
		}
		return nil
	})
	if reason == nil {
		return b.read(certFile, keyFile)
	}
	issue := b.CA.IssueServing
	if peer {
		issue = b.CA.IssuePeer
	}
	certPEM, keyPEM, err = issue(cn, dnsNames, ips, DefaultCertValidity)
	if err != nil {
		return nil, nil, err
	}
	if err := b.writePair(certFile, keyFile, certPEM, keyPEM, reason); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// errMissing marks a pair that is simply not there yet.
var errMissing = errors.New("missing")

// reuse returns nil when certFile/keyFile hold a pair issued by the bundle's
// CA for usage, valid for at least renewBefore, that passes check; otherwise
// the reason it must be (re-)issued.
func (b *Bundle) reuse(certFile, keyFile string, usage x509.ExtKeyUsage, check func(*x509.Certificate) error) error {
	certPEM, keyPEM, err := b.read(certFile, keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return errMissing
	}
	if err != nil {
		return err
	}
	cert, err := ParseCertPEM(certPEM)
	if err != nil {
		return err
	}
	key, err := ParseKeyPEM(keyPEM)
	if err != nil {
		return err
	}
	if !publicKeysEqual(cert.PublicKey, key) {
		return errors.New("key does not match certificate")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: b.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return fmt.Errorf("does not verify against the CA: %w", err)
	}
	if time.Until(cert.NotAfter) < renewBefore {
		return fmt.Errorf("expires at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return check(cert)
}

func (b *Bundle) read(certFile, keyFile string) (certPEM, keyPEM []byte, err error) {
	if certPEM, err = os.ReadFile(b.Path(certFile)); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = os.ReadFile(b.Path(keyFile)); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

func (b *Bundle) writePair(certFile, keyFile string, certPEM, keyPEM []byte, reason error) error {
	// the key first: a crash in between leaves an old certificate that does
	// not match the new key, which the next start replaces.
	if err := writeFileAtomic(b.Path(keyFile), keyPEM, 0o600); err != nil {
		return err
	}
	if err := writeFileAtomic(b.Path(certFile), certPEM, 0o644); err != nil {
		return err
	}
	verb := "re-issued, " + reason.Error()
	if errors.Is(reason, errMissing) {
		verb = "created"
	}
	b.Written = append(b.Written, certFile+": "+verb, keyFile+": "+verb)
	return nil
}

// servingSANs lists the names the serving certificate must hold.
func servingSANs(opts ServingOptions) (dnsNames []string, ips []net.IP, err error) {
	addIP := func(ip net.IP) {
		if !slices.ContainsFunc(ips, ip.Equal) {
			ips = append(ips, ip)
		}
	}
	addDNS := func(n string) {
		n = strings.ToLower(n)
		if !slices.Contains(dnsNames, n) {
			dnsNames = append(dnsNames, n)
		}
	}
	if opts.AdvertiseAddress != nil {
		if opts.AdvertiseAddress.IsUnspecified() {
			return nil, nil, fmt.Errorf("advertise address %s is unspecified; give the address clients reach", opts.AdvertiseAddress)
		}
		addIP(opts.AdvertiseAddress)
	}
	for _, s := range opts.ExtraSANs {
		if ip := net.ParseIP(s); ip != nil {
			addIP(ip)
			continue
		}
		if !isDNSName(strings.TrimPrefix(s, "*.")) {
			return nil, nil, fmt.Errorf("extra SAN %q is neither an IP address nor a DNS name", s)
		}
		addDNS(s)
	}
	addDNS("localhost")
	addIP(net.IPv4(127, 0, 0, 1))
	if h, err := os.Hostname(); err == nil && isDNSName(h) {
		addDNS(h)
	}
	for _, n := range []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + ClusterDomain} {
		addDNS(n)
	}
	svc := opts.ServiceIP
	if svc == nil {
		svc = DefaultServiceIP
	}
	addIP(svc)
	return dnsNames, ips, nil
}

func missingSANs(c *x509.Certificate, dnsNames []string, ips []net.IP) []string {
	var missing []string
	for _, n := range dnsNames {
		if !slices.ContainsFunc(c.DNSNames, func(have string) bool { return strings.EqualFold(have, n) }) {
			missing = append(missing, n)
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			missing = append(missing, ip.String())
		}
	}
	return missing
}

// isDNSName accepts RFC 1123 host names: dot-separated labels of letters,
// digits and inner hyphens, each at most 63 long, 253 in all.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a half-written file; the
// mode is set before any secret byte is written.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
