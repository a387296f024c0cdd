package bootstrap

import "flag"

// Options are the join flags. --kubeconfig and --root-dir belong to the
// app (it passes them to Config).
type Options struct {
	BootstrapKubeconfig string
	Server              string
	Token               string
	CACertHash          string
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *flag.FlagSet) {
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
