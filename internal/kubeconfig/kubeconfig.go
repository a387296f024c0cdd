package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/internal/client"
)

// RecommendedHomeFile is the default kubeconfig path below the home directory.
const RecommendedHomeFile = ".kube/config"

// EnvVar lists kubeconfig files to merge, separated like $PATH.
const EnvVar = "KUBECONFIG"

// ClusterName is the cluster name NewForCluster writes.
const ClusterName = "minik8s"

// ErrEmptyConfig is returned by ClientConfig when no file defined anything.
var ErrEmptyConfig = errors.New("invalid configuration: no configuration has been provided")

// Config is a kubeconfig file.
type Config struct {
	APIVersion     string          `json:"apiVersion,omitempty"`
	Kind           string          `json:"kind,omitempty"`
	Preferences    Preferences     `json:"preferences"`
	Clusters       []NamedCluster  `json:"clusters"`
	Users          []NamedAuthInfo `json:"users"`
	Contexts       []NamedContext  `json:"contexts"`
	CurrentContext string          `json:"current-context"`
}

// Preferences holds kubectl preferences; kept for round trips.
type Preferences struct {
	Colors bool `json:"colors,omitempty"`
}

// NamedCluster is a cluster entry.
type NamedCluster struct {
	Name    string  `json:"name"`
	Cluster Cluster `json:"cluster"`
	// origin is the file the entry was read from, for relative paths.
	origin string
}

// Cluster says where a cluster is and how to trust it.
type Cluster struct {
	Server                   string `json:"server"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthority     string `json:"certificate-authority,omitempty"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
}

// NamedAuthInfo is a user entry.
type NamedAuthInfo struct {
	Name   string   `json:"name"`
	User   AuthInfo `json:"user"`
	origin string
}

// AuthInfo holds a user's credentials: a client certificate and key (files or
// inline PEM), or a bearer token (inline or in a file).
type AuthInfo struct {
	ClientCertificate     string `json:"client-certificate,omitempty"`
	ClientCertificateData []byte `json:"client-certificate-data,omitempty"`
	ClientKey             string `json:"client-key,omitempty"`
	ClientKeyData         []byte `json:"client-key-data,omitempty"`
	Token                 string `json:"token,omitempty"`
	TokenFile             string `json:"tokenFile,omitempty"`
	// Impersonate, ImpersonateUID, ImpersonateGroups and
	// ImpersonateUserExtra make the user's requests act as another
	// (kubectl's --as, --as-uid, --as-group in a kubeconfig).
	Impersonate          string              `json:"as,omitempty"`
	ImpersonateUID       string              `json:"as-uid,omitempty"`
	ImpersonateGroups    []string            `json:"as-groups,omitempty"`
	ImpersonateUserExtra map[string][]string `json:"as-user-extra,omitempty"`
}

// NamedContext is a context entry.
type NamedContext struct {
	Name    string  `json:"name"`
	Context Context `json:"context"`
}

// Context ties a cluster to a user and a default namespace.
type Context struct {
	Cluster   string `json:"cluster"`
	AuthInfo  string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
}

// Load reads one kubeconfig file. An empty file is an empty Config.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	var cfg Config
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	for i := range cfg.Clusters {
		cfg.Clusters[i].origin = abs
	}
	for i := range cfg.Users {
		cfg.Users[i].origin = abs
	}
	return &cfg, nil
}

// LoadDefault loads the kubeconfig kubectl would use: explicit when not
// empty (a missing file is an error), else the merge of the files in
// $KUBECONFIG (missing ones are skipped), else ~/.kube/config. When no file
// exists the result is an empty Config, on which ClientConfig returns
// ErrEmptyConfig.
func LoadDefault(explicit string) (*Config, error) {
	if explicit != "" {
		return Load(explicit)
	}
	var paths []string
	if env := os.Getenv(EnvVar); env != "" {
		seen := map[string]bool{}
		for _, p := range filepath.SplitList(env) {
			if p != "" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	} else if home, err := os.UserHomeDir(); err == nil {
		paths = []string{filepath.Join(home, RecommendedHomeFile)}
	}
	merged := &Config{}
	for _, p := range paths {
		cfg, err := Load(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		merged.merge(cfg)
	}
	return merged, nil
}

// merge adds what other defines and c does not: the first definition wins.
func (c *Config) merge(other *Config) {
	if c.APIVersion == "" {
		c.APIVersion, c.Kind = other.APIVersion, other.Kind
	}
	if c.CurrentContext == "" {
		c.CurrentContext = other.CurrentContext
	}
	if c.Preferences == (Preferences{}) {
		c.Preferences = other.Preferences
	}
	for _, e := range other.Clusters {
		if _, ok := c.cluster(e.Name); !ok {
			c.Clusters = append(c.Clusters, e)
		}
	}
	for _, e := range other.Users {
		if _, ok := c.user(e.Name); !ok {
			c.Users = append(c.Users, e)
		}
	}
	for _, e := range other.Contexts {
		if _, ok := c.context(e.Name); !ok {
			c.Contexts = append(c.Contexts, e)
		}
	}
}

func (c *Config) cluster(name string) (NamedCluster, bool) {
	for _, e := range c.Clusters {
		if e.Name == name {
			return e, true
		}
	}
	return NamedCluster{}, false
}

func (c *Config) user(name string) (NamedAuthInfo, bool) {
	for _, e := range c.Users {
		if e.Name == name {
			return e, true
		}
	}
	return NamedAuthInfo{}, false
}

func (c *Config) context(name string) (NamedContext, bool) {
	for _, e := range c.Contexts {
		if e.Name == name {
			return e, true
		}
	}
	return NamedContext{}, false
}

// Write writes cfg to path with mode 0600, creating the directory (0700) if
// needed. The file is replaced atomically.
func Write(path string, cfg *Config) error {
	out := *cfg
	if out.APIVersion == "" {
		out.APIVersion = "v1"
	}
	if out.Kind == "" {
		out.Kind = "Config"
	}
	b, err := yaml.Marshal(&out)
	if err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	f, err := os.CreateTemp(dir, ".kubeconfig-*")
	if err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// Namespace returns the namespace of the named context (the current context
// when contextName is empty), "default" when it sets none.
func (c *Config) Namespace(contextName string) string {
	if contextName == "" {
		contextName = c.CurrentContext
	}
	if ctx, ok := c.context(contextName); ok && ctx.Context.Namespace != "" {
		return ctx.Context.Namespace
	}
	return "default"
}

// ClientConfig resolves the named context (the current context when
// contextName is empty) into a client configuration, reading the files it
// names. The caller sets QPS, Burst, Timeout and UserAgent on the result.
func (c *Config) ClientConfig(contextName string) (*client.Config, error) {
	if len(c.Clusters) == 0 && len(c.Users) == 0 && len(c.Contexts) == 0 {
		return nil, ErrEmptyConfig
	}
	if contextName == "" {
		contextName = c.CurrentContext
	}
	if contextName == "" {
		return nil, errors.New("invalid configuration: no context chosen")
	}
	ctx, ok := c.context(contextName)
	if !ok {
		return nil, fmt.Errorf("context was not found for specified context: %s", contextName)
	}
	if ctx.Context.Cluster == "" {
		return nil, fmt.Errorf("invalid configuration: cluster was not specified for context %q", contextName)
	}
	cl, ok := c.cluster(ctx.Context.Cluster)
	if !ok {
		return nil, fmt.Errorf("invalid configuration: cluster %q was not found for context %q", ctx.Context.Cluster, contextName)
	}
	if cl.Cluster.Server == "" {
		return nil, fmt.Errorf("invalid configuration: no server found for cluster %q", cl.Name)
	}
	out := &client.Config{
		Host:       cl.Cluster.Server,
		Insecure:   cl.Cluster.InsecureSkipTLSVerify,
		ServerName: cl.Cluster.TLSServerName,
	}
	var err error
	out.CAData, err = dataOrFile(cl.Cluster.CertificateAuthorityData, cl.Cluster.CertificateAuthority, cl.origin)
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: unable to read certificate-authority %s for %s due to %w",
			cl.Cluster.CertificateAuthority, cl.Name, err)
	}
	if out.Insecure && len(out.CAData) > 0 {
		return nil, fmt.Errorf("invalid configuration: specifying a root certificates file with the insecure flag is not allowed (cluster %q)", cl.Name)
	}
	if ctx.Context.AuthInfo == "" {
		return nil, fmt.Errorf("invalid configuration: user was not specified for context %q", contextName)
	}
	u, ok := c.user(ctx.Context.AuthInfo)
	if !ok {
		return nil, fmt.Errorf("invalid configuration: user %q was not found for context %q", ctx.Context.AuthInfo, contextName)
	}
	if err := u.fill(out); err != nil {
		return nil, err
	}
	return out, nil
}

func (u NamedAuthInfo) fill(out *client.Config) error {
	a := u.User
	var err error
	out.CertData, err = dataOrFile(a.ClientCertificateData, a.ClientCertificate, u.origin)
	if err != nil {
		return fmt.Errorf("invalid configuration: unable to read client-cert %s for %s due to %w", a.ClientCertificate, u.Name, err)
	}
	out.KeyData, err = dataOrFile(a.ClientKeyData, a.ClientKey, u.origin)
	if err != nil {
		return fmt.Errorf("invalid configuration: unable to read client-key %s for %s due to %w", a.ClientKey, u.Name, err)
	}
	if len(out.CertData) > 0 && len(out.KeyData) == 0 {
		return fmt.Errorf("invalid configuration: client-key-data or client-key must be specified for %s to use the clientCert authentication method", u.Name)
	}
	out.BearerToken = a.Token
	if out.BearerToken == "" && a.TokenFile != "" {
		b, err := os.ReadFile(resolve(a.TokenFile, u.origin))
		if err != nil {
			return fmt.Errorf("invalid configuration: unable to read tokenFile %s for %s due to %w", a.TokenFile, u.Name, err)
		}
		out.BearerToken = strings.TrimSpace(string(b))
	}
	out.Impersonate = client.Impersonation{UserName: a.Impersonate, UID: a.ImpersonateUID,
		Groups: a.ImpersonateGroups, Extra: a.ImpersonateUserExtra}
	return nil
}

// dataOrFile returns inline data when present, else the content of the file.
func dataOrFile(data []byte, file, origin string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	return os.ReadFile(resolve(file, origin))
}

// resolve makes a relative path relative to the kubeconfig that named it.
func resolve(path, origin string) string {
	if filepath.IsAbs(path) || origin == "" {
		return path
	}
	return filepath.Join(filepath.Dir(origin), path)
}

// NewForCluster builds a kubeconfig with one cluster (named ClusterName, at
// server, trusted through caPEM), one user with the given credentials
// (client certificate and key data, or a token) and one current context
// "USER@minik8s" defaulting to namespace. The apiserver's --write-kubeconfig
// uses it for the admin kubeconfig.
func NewForCluster(server string, caPEM []byte, user string, creds AuthInfo, namespace string) *Config {
	ctxName := user + "@" + ClusterName
	return &Config{
		APIVersion:     "v1",
		Kind:           "Config",
		Clusters:       []NamedCluster{{Name: ClusterName, Cluster: Cluster{Server: server, CertificateAuthorityData: caPEM}}},
		Users:          []NamedAuthInfo{{Name: user, User: creds}},
		Contexts:       []NamedContext{{Name: ctxName, Context: Context{Cluster: ClusterName, AuthInfo: user, Namespace: namespace}}},
		CurrentContext: ctxName,
	}
}
