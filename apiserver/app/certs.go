package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// certsOptions are the flags of "apiserver certs", named as the
// apiserver's own so one set of values serves both.
type certsOptions struct {
	opts          *Options
	nodeName      string
	kubeletConfig string
	kubeletServer string
	tlsSANs       []string
}

// newCertsCommand is "apiserver certs": what kubeadm's "init phase certs
// all" and "init phase kubeconfig" do, before any server runs. It writes
// the certificate directory the apiserver would make on its first start
// (cluster CA and serving certificate, the embedded etcd's PKI, the
// front-proxy CA), the admin and component kubeconfigs, and, with
// --node-name, a kubeconfig for that node's kubelet (system:node:NAME in
// system:nodes). A control plane run as static pods needs them first: its
// kubelet must hold credentials before the apiserver it starts is up.
// Files already there are kept.
func newCertsCommand() *cobra.Command {
	def := DefaultOptions()
	o := &certsOptions{opts: &def}
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Write the certificate directory and kubeconfigs before the apiserver first starts",
		Long: `Write what the apiserver makes on its first start, without starting it: the
cluster CA and serving certificate in --cert-dir, the embedded etcd's PKI in
its etcd/ directory, the front-proxy CA, the admin kubeconfig
(--write-kubeconfig) and the scheduler's, controller-manager's and
kube-proxy's kubeconfigs; with --node-name and --kubelet-kubeconfig, also a
kubelet kubeconfig with a client certificate for system:node:NAME, as
kubeadm's kubelet.conf. Existing files are kept. The flags must match the
apiserver's that will serve this directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return daemon.UsageError(err)
			}
			return o.run(cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.opts.CertDir, "cert-dir", o.opts.CertDir, "The directory of the certificates, as the apiserver's --cert-dir.")
	fs.StringVar(&o.opts.AdvertiseAddress, "advertise-address", o.opts.AdvertiseAddress, "The address the serving certificate names and the kubeconfigs point at, as the apiserver's --advertise-address.")
	fs.IntVar(&o.opts.SecurePort, "secure-port", o.opts.SecurePort, "The apiserver's HTTPS port, for the kubeconfigs' server URL.")
	fs.StringSliceVar(&o.tlsSANs, "tls-san", nil, "Comma-separated extra DNS names or IPs of the serving certificate, as the apiserver's --tls-san.")
	fs.StringVar(&o.opts.EtcdClientURL, "embedded-etcd-client-url", o.opts.EtcdClientURL, "The embedded etcd's client URL, as the apiserver's (its certificate names the host).")
	fs.StringVar(&o.opts.EtcdPeerURL, "embedded-etcd-peer-url", o.opts.EtcdPeerURL, "The embedded etcd's peer URL, as the apiserver's.")
	fs.StringVar(&o.opts.WriteKubeconfig, "write-kubeconfig", o.opts.WriteKubeconfig, "Where to write the admin kubeconfig (empty: not written).")
	fs.StringVar(&o.nodeName, "node-name", "", "The node whose kubelet gets a kubeconfig (with --kubelet-kubeconfig).")
	fs.StringVar(&o.kubeletConfig, "kubelet-kubeconfig", "", "Where to write the kubelet's kubeconfig for --node-name.")
	fs.StringVar(&o.kubeletServer, "kubelet-server", "", "The server URL in the kubelet's kubeconfig (default: https://ADVERTISE-ADDRESS:SECURE-PORT).")
	return cmd
}

func (o *certsOptions) validate() error {
	if o.opts.CertDir == "" {
		return errors.New("--cert-dir is required")
	}
	if o.opts.SecurePort <= 0 || o.opts.SecurePort > 65535 {
		return fmt.Errorf("--secure-port %d: must be between 1 and 65535", o.opts.SecurePort)
	}
	if a := o.opts.AdvertiseAddress; a != "" && net.ParseIP(a) == nil {
		return fmt.Errorf("--advertise-address %q: not an IP address", a)
	}
	if (o.nodeName == "") != (o.kubeletConfig == "") {
		return errors.New("--node-name and --kubelet-kubeconfig go together")
	}
	if o.nodeName != "" {
		if errs := naming.IsDNS1123Subdomain(o.nodeName); len(errs) > 0 {
			return fmt.Errorf("--node-name %q: %s", o.nodeName, strings.Join(errs, "; "))
		}
	}
	o.opts.TLSSANs = o.tlsSANs
	return nil
}

func (o *certsOptions) run(stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	a := &APIServer{opts: *o.opts, log: log}
	bundle, err := pki.EnsureServing(o.opts.CertDir, pki.ServingOptions{AdvertiseAddress: a.advertiseIP(), ExtraSANs: o.opts.TLSSANs})
	if err != nil {
		return fmt.Errorf("certificates in %s: %w", o.opts.CertDir, err)
	}
	written := bundle.Written
	eb, err := pki.EnsureEtcd(o.opts.CertDir, pki.EtcdOptions{IPs: a.embeddedEtcdIPs()})
	if err != nil {
		return fmt.Errorf("etcd certificates in %s: %w", o.opts.CertDir, err)
	}
	written = append(written, eb.Written...)
	fb, _, _, err := pki.EnsureFrontProxy(o.opts.CertDir)
	if err != nil {
		return fmt.Errorf("front-proxy certificates in %s: %w", o.opts.CertDir, err)
	}
	written = append(written, fb.Written...)
	for _, w := range written {
		log.Info("wrote certificate", "file", w)
	}
	if o.opts.WriteKubeconfig != "" {
		if err := a.writeAdminKubeconfig(bundle); err != nil {
			return err
		}
	}
	if err := a.writeComponentKubeconfigs(bundle); err != nil {
		return err
	}
	if o.nodeName == "" {
		return nil
	}
	user := pki.NodeUser(o.nodeName)
	certPEM, keyPEM, err := bundle.EnsureClientCert("kubelet-"+o.nodeName, user, []string{pki.NodesGroup})
	if err != nil {
		return fmt.Errorf("client certificate of %s: %w", user, err)
	}
	server := o.kubeletServer
	if server == "" {
		server = a.serverURL()
	}
	cfg := kubeconfig.NewForCluster(server, bundle.CA.CertPEM(), user,
		kubeconfig.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "")
	if err := kubeconfig.Write(o.kubeletConfig, cfg); err != nil {
		return fmt.Errorf("--kubelet-kubeconfig: %w", err)
	}
	log.Info("wrote kubelet kubeconfig", "path", o.kubeletConfig, "user", user, "server", server)
	return nil
}
