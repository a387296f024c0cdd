package app

import (
	"fmt"
	"net"
	"net/url"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/internal/pki"
)

// etcdConfig is the etcd behind the apiserver: an external cluster as the
// --etcd-* flags say, or the embedded server secured as kubeadm secures
// etcd: TLS on the client and peer URLs, client certificates of the etcd CA
// required on both (a local user or a hostNetwork pod reaching the port
// gets nowhere), the apiserver presenting apiserver-etcd-client. The etcd
// PKI is made in --cert-dir on first start and reused after.
func (a *APIServer) etcdConfig() (etcd.Config, error) {
	cfg := etcd.Config{
		DataDir:         a.opts.DataDir,
		ListenClientURL: a.opts.EtcdClientURL,
		ListenPeerURL:   a.opts.EtcdPeerURL,
		Servers:         a.opts.EtcdServers,
		CAFile:          a.opts.EtcdCAFile,
		CertFile:        a.opts.EtcdCertFile,
		KeyFile:         a.opts.EtcdKeyFile,
		Cluster:         a.opts.etcdClusterConfig(),
		Logger:          a.log.With("component", "etcd"),
	}
	if len(cfg.Servers) > 0 {
		return cfg, nil
	}
	b, err := pki.EnsureEtcd(a.opts.CertDir, a.embeddedEtcdSANs())
	if err != nil {
		return etcd.Config{}, fmt.Errorf("etcd certificates in %s: %w", a.opts.CertDir, err)
	}
	for _, w := range b.Written {
		a.log.Info("wrote certificate", "file", w)
	}
	ca := b.Path(pki.EtcdCACertFile)
	cfg.ServerTLS = &etcd.TLSFiles{CertFile: b.Path(pki.EtcdServerCertFile), KeyFile: b.Path(pki.EtcdServerKeyFile), ClientCAFile: ca}
	cfg.PeerTLS = &etcd.TLSFiles{CertFile: b.Path(pki.EtcdPeerCertFile), KeyFile: b.Path(pki.EtcdPeerKeyFile), ClientCAFile: ca}
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = ca, b.Path(pki.APIServerEtcdClientCertFile), b.Path(pki.APIServerEtcdClientKeyFile)
	return cfg, nil
}

// embeddedEtcdSANs are the addresses the embedded etcd's certificates name
// besides loopback: the hosts of its listen and advertise URLs (a name
// among them too: the peers of a multi-member cluster dial it), and the
// advertise address when one listens on every address.
func (a *APIServer) embeddedEtcdSANs() pki.EtcdOptions {
	var ips []net.IP
	var names []string
	c := a.opts.EtcdCluster
	for _, s := range []string{a.opts.EtcdClientURL, a.opts.EtcdPeerURL, c.AdvertiseClientURL, c.AdvertisePeerURL} {
		u, err := url.Parse(s)
		if s == "" || err != nil {
			continue
		}
		ip := net.ParseIP(u.Hostname())
		switch {
		case ip == nil:
			names = append(names, u.Hostname())
		case ip.IsUnspecified():
			if adv := a.advertiseIP(); adv != nil {
				ips = append(ips, adv)
			}
		default:
			ips = append(ips, ip)
		}
	}
	return pki.EtcdOptions{IPs: ips, DNSNames: names}
}

// embeddedEtcdIPs are the addresses of embeddedEtcdSANs.
func (a *APIServer) embeddedEtcdIPs() []net.IP { return a.embeddedEtcdSANs().IPs }
