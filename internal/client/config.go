package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/minik8s/minik8s/internal/version"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultQPS   float32 = 50
	DefaultBurst int     = 100
	// DefaultMaxRetries bounds the retries of a request the server refused
	// (429 or 5xx) with a Retry-After header.
	DefaultMaxRetries int = 10
)

// Config says how to reach and authenticate to an apiserver. kubeconfig
// produces one from a kubeconfig file; components may also fill it directly.
type Config struct {
	// Host is the server URL, "https://127.0.0.1:6443". A bare "host:port"
	// means https. Plain http is accepted for tests and local setups.
	Host string
	// CAData is the PEM bundle the server certificate must chain to. When
	// empty, the system roots are used.
	CAData []byte
	// CertData and KeyData are the PEM client certificate and key.
	CertData, KeyData []byte
	// BearerToken is sent as "Authorization: Bearer TOKEN".
	BearerToken string
	// BearerTokenFile, when set, holds the token instead: it is read again
	// every minute, so a token rotated in the file (a pod's service account
	// token) is picked up. BearerToken, if set, is used until the first
	// re-read.
	BearerTokenFile string
	// Insecure skips verification of the server certificate. Only set it when
	// the user explicitly asked (insecure-skip-tls-verify); it may not be
	// combined with CAData.
	Insecure bool
	// ServerName overrides the name the server certificate is verified
	// against (tls-server-name).
	ServerName string
	// QPS and Burst configure the client-side rate limiter. Zero means the
	// defaults (50, 100); a negative QPS disables rate limiting.
	QPS   float32
	Burst int
	// Timeout bounds each non-streaming request, including retries. Zero
	// means no limit beyond the caller's context. Watches and streams are
	// never subject to it.
	Timeout time.Duration
	// UserAgent is sent with every request, "minik8s-scheduler/v0.1.0".
	// Empty means "<binary name>/<version> (<os>/<arch>)".
	UserAgent string
	// MaxRetries bounds retries after a 429 or 5xx with Retry-After. Zero means
	// DefaultMaxRetries; negative disables retries.
	MaxRetries int
	// Impersonate, when it names a user, makes every request act as that
	// user (kubectl's --as, --as-group, --as-uid).
	Impersonate Impersonation
}

// Impersonation is who requests act as, sent in the Impersonate-* headers
// the apiserver checks against the impersonate verb.
type Impersonation struct {
	UserName string
	UID      string
	Groups   []string
	Extra    map[string][]string
}

// SetHeaders adds the Impersonate-* headers of im to h (none when im names
// no user); streaming clients that dial on their own call it too.
func (im Impersonation) SetHeaders(h http.Header) {
	if im.UserName == "" {
		return
	}
	h.Set("Impersonate-User", im.UserName)
	if im.UID != "" {
		h.Set("Impersonate-Uid", im.UID)
	}
	for _, g := range im.Groups {
		h.Add("Impersonate-Group", g)
	}
	for k, vs := range im.Extra {
		for _, v := range vs {
			h.Add("Impersonate-Extra-"+url.PathEscape(k), v)
		}
	}
}

// DefaultUserAgent returns "<binary>/<version> (<os>/<arch>)", the User-Agent
// sent when Config.UserAgent is empty.
func DefaultUserAgent() string {
	name := "minik8s"
	if len(os.Args) > 0 && os.Args[0] != "" {
		name = filepath.Base(os.Args[0])
	}
	return fmt.Sprintf("%s/%s (%s/%s)", name, version.String(), runtime.GOOS, runtime.GOARCH)
}

// UserAgentFor returns "minik8s-COMPONENT/VERSION", the User-Agent components
// set for themselves ("minik8s-scheduler/v0.1.0").
func UserAgentFor(component string) string {
	return "minik8s-" + component + "/" + version.String()
}

// baseURL parses Host.
func (c *Config) baseURL() (*url.URL, error) {
	host := strings.TrimSpace(c.Host)
	if host == "" {
		return nil, errors.New("client config: host must be set")
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("client config: parse host %q: %w", c.Host, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("client config: host %q: scheme must be http or https", c.Host)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client config: host %q has no host name", c.Host)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// tlsConfig builds the TLS configuration: the server is always verified
// against CAData (or the system roots) unless Insecure is set.
func (c *Config) tlsConfig() (*tls.Config, error) {
	if c.Insecure && len(c.CAData) > 0 {
		return nil, errors.New("client config: specifying a root certificates file with the insecure flag is not allowed")
	}
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         c.ServerName,
		InsecureSkipVerify: c.Insecure, //nolint:gosec // only when the user asked for it explicitly
	}
	if len(c.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c.CAData) {
			return nil, errors.New("client config: certificate authority data contains no PEM certificate")
		}
		tc.RootCAs = pool
	}
	switch {
	case len(c.CertData) > 0 && len(c.KeyData) > 0:
		cert, err := tls.X509KeyPair(c.CertData, c.KeyData)
		if err != nil {
			return nil, fmt.Errorf("client config: client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case len(c.CertData) > 0 || len(c.KeyData) > 0:
		return nil, errors.New("client config: client certificate and key must both be set")
	}
	return tc, nil
}

// transport builds an HTTP transport with keep-alives and HTTP/2 over TLS.
// HTTP/2 pings detect dead connections so that watches do not hang forever
// on a half-open TCP connection.
func (c *Config) transport(scheme string) (*http.Transport, error) {
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   25,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		HTTP2: &http.HTTP2Config{
			SendPingTimeout: 30 * time.Second,
			PingTimeout:     15 * time.Second,
		},
	}
	if scheme == "https" {
		tc, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		t.TLSClientConfig = tc
	} else if len(c.CertData) > 0 || len(c.CAData) > 0 {
		return nil, fmt.Errorf("client config: host %q is plain http but TLS data was given", c.Host)
	}
	return t, nil
}
