package bootstrap

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/minik8s/minik8s/internal/pki"
	"github.com/spf13/pflag"
)

// Options are the join flags. --kubeconfig and --root-dir belong to the
// app (it passes them to Config).
type Options struct {
	BootstrapKubeconfig string
	Server              string
	Token               string
	CACertHash          string
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "kubeconfig with a bootstrap token, used to get a client certificate when --kubeconfig does not exist")
	fs.StringVar(&o.Server, "server", o.Server, "apiserver URL to join, https://HOST:6443 (with --token)")
	fs.StringVar(&o.Token, "token", o.Token, "bootstrap token ID.SECRET to join with when --kubeconfig does not exist")
	fs.StringVar(&o.CACertHash, "discovery-token-ca-cert-hash", o.CACertHash, "sha256:HEX hash of the cluster CA's public key, to trust --server")
}

// Config is the bootstrap Config for these options.
func (o *Options) Config(kubeconfig, rootDir, nodeName string) Config {
	return Config{Kubeconfig: kubeconfig, BootstrapKubeconfig: o.BootstrapKubeconfig, Server: o.Server, Token: o.Token,
		CACertHash: o.CACertHash, RootDir: rootDir, NodeName: nodeName}
}

// Validate checks the join flags' formats and that --token comes with what
// it needs (without a bootstrap kubeconfig): --server and the CA hash. It
// reads no file.
func (o *Options) Validate() error {
	var errs []error
	if o.Server != "" {
		if u, err := url.Parse(o.Server); err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, fmt.Errorf("--server %q: want https://HOST:PORT", o.Server))
		}
	}
	if o.Token != "" {
		if _, _, err := pki.ParseBootstrapToken(o.Token); err != nil {
			errs = append(errs, fmt.Errorf("--token: %w", err))
		}
		if o.BootstrapKubeconfig == "" && (o.Server == "" || o.CACertHash == "") {
			errs = append(errs, errors.New("--token needs --server and --discovery-token-ca-cert-hash (or a --bootstrap-kubeconfig)"))
		}
	}
	if o.CACertHash != "" {
		if err := pki.ValidateCAHash(o.CACertHash); err != nil {
			errs = append(errs, fmt.Errorf("--discovery-token-ca-cert-hash: %w", err))
		}
	}
	return errors.Join(errs...)
}
