package bootstrap

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// Files under <root-dir>/pki, the kubelet's names.
const (
	ClientCurrentFile = "kubelet-client-current.pem"
	clientKeyTmpFile  = "kubelet-client.key.tmp"
	clientCSRTmpFile  = "kubelet-client.csr.tmp"
)

// Config says where the kubelet's credentials are and how to get them.
type Config struct {
	// Kubeconfig is --kubeconfig: used when it exists, written after a join.
	Kubeconfig string
	// BootstrapKubeconfig is --bootstrap-kubeconfig: a kubeconfig with a
	// bootstrap token (and the CA) to join with.
	BootstrapKubeconfig string
	// Server, Token and CACertHash are the join without a bootstrap
	// kubeconfig: --server https://HOST:6443, --token ID.SECRET and
	// --discovery-token-ca-cert-hash sha256:HEX (the CA is fetched and
	// pinned by its hash).
	Server     string
	Token      string
	CACertHash string
	// RootDir is --root-dir; the certificate goes to RootDir/pki.
	RootDir string
	// NodeName is the node the identity is for.
	NodeName string
	// Timeout bounds waiting for the CSR to be signed (default 15 minutes).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Join is the outcome of LoadOrJoin.
type Join struct {
	// Client configures the kubelet's API client.
	Client *client.Config
	// CAData is the cluster CA (PEM): the default --client-ca-file.
	CAData []byte
	// Joined is true when a new certificate was obtained this time.
	Joined bool
}

// LoadOrJoin returns the kubelet's API credentials: those of --kubeconfig
// when it exists and its certificate has not expired, otherwise a new
// client certificate obtained through the bootstrap join, written to
// RootDir/pki/kubelet-client-current.pem with the kubeconfig pointing at it.
func LoadOrJoin(ctx context.Context, cfg Config) (*Join, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Minute
	}
	canJoin := cfg.BootstrapKubeconfig != "" || cfg.Token != ""
	if cfg.Kubeconfig == "" {
		return nil, errors.New("--kubeconfig is required (the bootstrap join writes it)")
	}
	if _, err := os.Stat(cfg.Kubeconfig); err == nil {
		j, err := load(cfg.Kubeconfig)
		if err == nil {
			return j, nil
		}
		if !canJoin || !errors.Is(err, errExpired) {
			return nil, err
		}
		cfg.Logger.Warn("client certificate expired, joining again", "kubeconfig", cfg.Kubeconfig, "err", err)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	} else if !canJoin {
		return nil, fmt.Errorf("--kubeconfig %s does not exist and neither --bootstrap-kubeconfig nor --token is given to join with", cfg.Kubeconfig)
	}
	return join(ctx, cfg)
}

var errExpired = errors.New("certificate expired")

// load reads an existing kubeconfig and checks its client certificate.
func load(path string) (*Join, error) {
	kc, err := kubeconfig.Load(path)
	if err != nil {
		return nil, err
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if len(cc.CertData) > 0 {
		cert, err := pki.ParseCertPEM(cc.CertData)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: client certificate: %w", path, err)
		}
		if !time.Now().Before(cert.NotAfter) {
			return nil, fmt.Errorf("kubeconfig %s: client certificate of %q expired at %s: %w", path,
				cert.Subject.CommonName, cert.NotAfter.UTC().Format(time.RFC3339), errExpired)
		}
	}
	return &Join{Client: cc, CAData: cc.CAData}, nil
}

// bootstrapClient is the client that files the CSR: from the bootstrap
// kubeconfig, or from --server/--token with the pinned CA.
func bootstrapClient(ctx context.Context, cfg Config) (*client.Config, error) {
	if cfg.BootstrapKubeconfig != "" {
		kc, err := kubeconfig.Load(cfg.BootstrapKubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--bootstrap-kubeconfig: %w", err)
		}
		cc, err := kc.ClientConfig("")
		if err != nil {
			return nil, fmt.Errorf("--bootstrap-kubeconfig: %w", err)
		}
		return cc, nil
	}
	if cfg.Server == "" {
		return nil, errors.New("--token needs --server")
	}
	if cfg.CACertHash == "" {
		return nil, errors.New("--token needs --discovery-token-ca-cert-hash to trust the server")
	}
	if _, _, err := pki.ParseBootstrapToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("--token: %w", err)
	}
	caPEM, err := pki.FetchPinnedCA(ctx, cfg.Server, cfg.CACertHash)
	if err != nil {
		return nil, fmt.Errorf("discover the cluster CA: %w", err)
	}
	return &client.Config{Host: cfg.Server, CAData: caPEM, BearerToken: cfg.Token}, nil
}

// join files a CSR for system:node:NAME, waits for its certificate, and
// writes the certificate and the kubeconfig.
func join(ctx context.Context, cfg Config) (*Join, error) {
	log := cfg.Logger
	bc, err := bootstrapClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	bc.UserAgent = client.UserAgentFor("kubelet")
	c, err := client.New(bc)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.RootDir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// The key and request survive a restart mid-join, so a kubelet that
	// restarts finds its pending CSR instead of filing another.
	keyPEM, csrPEM, err := pendingRequest(dir, cfg.NodeName)
	if err != nil {
		return nil, err
	}
	req, err := pki.ParseCSRPEM(csrPEM)
	if err != nil {
		return nil, err
	}
	name := csrName(req)
	usages := make([]api.KeyUsage, 0, len(pki.KubeletClientUsages))
	for _, u := range pki.KubeletClientUsages {
		usages = append(usages, api.KeyUsage(u))
	}
	csrs := client.Resource[api.CertificateSigningRequest](c)
	_, err = csrs.Create(ctx, &api.CertificateSigningRequest{
		TypeMeta:   api.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.CertificateSigningRequestSpec{Request: csrPEM, SignerName: api.KubeAPIServerClientKubeletSignerName,
			Usages: usages},
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create certificate signing request: %w", err)
	}
	log.Info("waiting for the client certificate", "csr", name, "user", pki.NodeUser(cfg.NodeName))
	certPEM, err := waitForCertificate(ctx, csrs, name, csrPEM, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if _, err := pki.ParseCertPEM(certPEM); err != nil {
		return nil, fmt.Errorf("issued certificate: %w", err)
	}
	current, err := installCurrent(dir, "kubelet-client", certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	absCurrent, err := filepath.Abs(current)
	if err != nil {
		return nil, err
	}
	kc := kubeconfig.NewForCluster(bc.Host, bc.CAData, "default-auth",
		kubeconfig.AuthInfo{ClientCertificate: absCurrent, ClientKey: absCurrent}, "")
	if err := os.MkdirAll(filepath.Dir(cfg.Kubeconfig), 0o755); err != nil {
		return nil, err
	}
	if err := kubeconfig.Write(cfg.Kubeconfig, kc); err != nil {
		return nil, fmt.Errorf("write --kubeconfig: %w", err)
	}
	_ = os.Remove(filepath.Join(dir, clientKeyTmpFile))
	_ = os.Remove(filepath.Join(dir, clientCSRTmpFile))
	log.Info("joined the cluster", "user", pki.NodeUser(cfg.NodeName), "kubeconfig", cfg.Kubeconfig, "certificate", current)
	j, err := load(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
	j.Joined = true
	return j, nil
}

// pendingRequest returns the key and CSR of a join in progress, or new ones.
func pendingRequest(dir, node string) (keyPEM, csrPEM []byte, err error) {
	keyPath, csrPath := filepath.Join(dir, clientKeyTmpFile), filepath.Join(dir, clientCSRTmpFile)
	keyPEM, kerr := os.ReadFile(keyPath)
	csrPEM, cerr := os.ReadFile(csrPath)
	if kerr == nil && cerr == nil {
		if req, err := pki.ParseCSRPEM(csrPEM); err == nil && req.Subject.CommonName == pki.NodeUser(node) {
			return keyPEM, csrPEM, nil
		}
	}
	csrPEM, keyPEM, err = pki.NewCSR(pki.NodeUser(node), []string{pki.NodesGroup})
	if err != nil {
		return nil, nil, err
	}
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	if err := writeFileAtomic(csrPath, csrPEM, 0o600); err != nil {
		return nil, nil, err
	}
	return keyPEM, csrPEM, nil
}

// csrName is "node-csr-" and a digest of the request, stable for a key.
func csrName(req *x509.CertificateRequest) string {
	sum := sha256.Sum256(req.RawSubjectPublicKeyInfo)
	return "node-csr-" + strings.TrimRight(base64.RawURLEncoding.EncodeToString(sum[:]), "=")[:32]
}

// waitForCertificate polls the CSR until it is issued, denied or failed.
func waitForCertificate(ctx context.Context, csrs *client.ResourceClient[api.CertificateSigningRequest, *api.CertificateSigningRequest],
	name string, csrPEM []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	delay := 200 * time.Millisecond
	for {
		got, err := csrs.Get(ctx, name)
		switch {
		case err == nil:
			if string(got.Spec.Request) != string(csrPEM) {
				return nil, fmt.Errorf("certificate signing request %s exists with another key", name)
			}
			for _, c := range got.Status.Conditions {
				if c.Status != api.ConditionTrue {
					continue
				}
				switch c.Type {
				case api.CertificateDenied:
					return nil, fmt.Errorf("certificate signing request %s was denied, reason: %s, message: %s", name, c.Reason, c.Message)
				case api.CertificateFailed:
					return nil, fmt.Errorf("certificate signing request %s failed, reason: %s, message: %s", name, c.Reason, c.Message)
				}
			}
			if len(got.Status.Certificate) > 0 {
				return got.Status.Certificate, nil
			}
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("certificate signing request %s was deleted before it was signed", name)
		case ctx.Err() != nil:
		default:
			// Transient: keep waiting.
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("timed out waiting for certificate signing request %s to be signed: %w", name, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
}

// installCurrent writes certificate and key to DIR/PREFIX-TIMESTAMP.pem
// and points DIR/PREFIX-current.pem at it, as the kubelet's certificate
// store does; it returns the path of the link.
func installCurrent(dir, prefix string, certPEM, keyPEM []byte) (string, error) {
	stamped := prefix + "-" + time.Now().UTC().Format("2006-01-02-15-04-05") + ".pem"
	if err := writeFileAtomic(filepath.Join(dir, stamped), append(append([]byte{}, certPEM...), keyPEM...), 0o600); err != nil {
		return "", err
	}
	current := filepath.Join(dir, prefix+"-current.pem")
	tmpLink := current + ".tmp"
	_ = os.Remove(tmpLink)
	if err := os.Symlink(stamped, tmpLink); err != nil {
		return "", err
	}
	if err := os.Rename(tmpLink, current); err != nil {
		return "", err
	}
	return current, nil
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
