package client

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// The files and variables a pod's service account volume and the kubelet
// give in-cluster clients.
const (
	InClusterTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	InClusterCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
	// InClusterNamespaceFile holds the pod's namespace.
	InClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// ErrNotInCluster is returned by InClusterConfig outside a pod.
var ErrNotInCluster = errors.New("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")

// InClusterConfig is client-go's rest.InClusterConfig: the apiserver at
// https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, verified with the
// service account volume's ca.crt, authenticated by its token — read again
// from the file every minute, since the kubelet replaces it before it
// expires.
func InClusterConfig() (*Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, ErrNotInCluster
	}
	tok, err := os.ReadFile(InClusterTokenFile)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(InClusterCAFile)
	if err != nil {
		return nil, fmt.Errorf("in-cluster CA: %w", err)
	}
	return &Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		CAData:          ca,
		BearerToken:     strings.TrimSpace(string(tok)),
		BearerTokenFile: InClusterTokenFile,
	}, nil
}

// tokenFileRefresh is how long a token read from BearerTokenFile is used
// before the file is read again (client-go's cached file token source).
const tokenFileRefresh = time.Minute

// fileToken is a bearer token kept in a file that something else rotates.
type fileToken struct {
	path string
	now  func() time.Time

	mu     sync.Mutex
	tok    string
	readAt time.Time
}

func newFileToken(path, initial string) *fileToken {
	f := &fileToken{path: path, now: time.Now, tok: initial}
	if initial != "" {
		f.readAt = f.now()
	}
	return f
}

// token returns the file's token, read again once tokenFileRefresh has
// passed; a failed read keeps the last token.
func (f *fileToken) token() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tok != "" && f.now().Sub(f.readAt) < tokenFileRefresh {
		return f.tok
	}
	if b, err := os.ReadFile(f.path); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			f.tok = t
		}
	}
	f.readAt = f.now()
	return f.tok
}
