package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/minik8s/minik8s/apiserver/etcd"
)

// EmbeddedEtcdCluster are the --embedded-etcd-* flags that make the
// embedded etcd one member of a multi-member cluster, stacked as kubeadm
// stacks etcd: one member beside each apiserver, all sharing one etcd CA
// (--shared-cert-dir). They mean what etcd's own --name,
// --advertise-client-urls, --initial-advertise-peer-urls,
// --initial-cluster, --initial-cluster-state and --initial-cluster-token
// mean; Join is what kubeadm join --control-plane does (a member add
// through a running member, then a start with the "existing" state).
type EmbeddedEtcdCluster struct {
	Name                string
	AdvertiseClientURL  string
	AdvertisePeerURL    string
	InitialCluster      string
	InitialClusterState string
	InitialClusterToken string
	Join                []string
}

func (c *EmbeddedEtcdCluster) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Name, "embedded-etcd-name", c.Name, "The embedded etcd member's name, unique in its cluster (etcd --name; default "+etcd.DefaultMemberName+").")
	fs.StringVar(&c.AdvertiseClientURL, "embedded-etcd-advertise-client-url", c.AdvertiseClientURL, "The client URL the other members and apiservers reach this member at, https://HOST:PORT (default: --embedded-etcd-client-url). HOST must be named by the member's certificate: its host name, an IP of its URLs, or --advertise-address.")
	fs.StringVar(&c.AdvertisePeerURL, "embedded-etcd-advertise-peer-url", c.AdvertisePeerURL, "The peer URL the other members reach this member at, https://HOST:PORT (default: --embedded-etcd-peer-url); the one --embedded-etcd-initial-cluster names for this member.")
	fs.StringVar(&c.InitialCluster, "embedded-etcd-initial-cluster", c.InitialCluster, "The members bootstrapping the cluster together, NAME=https://HOST:2380,... with this member among them (etcd --initial-cluster; default: this member alone). Read only on a first start with an empty --data-dir.")
	fs.StringVar(&c.InitialClusterState, "embedded-etcd-initial-cluster-state", c.InitialClusterState, "new (the members of --embedded-etcd-initial-cluster start together) or existing (this member was added to a running cluster by a member add; default with --embedded-etcd-join).")
	fs.StringVar(&c.InitialClusterToken, "embedded-etcd-initial-cluster-token", c.InitialClusterToken, "The cluster's token at bootstrap, the same on every member (default "+etcd.DefaultClusterToken+").")
	fs.Var(stringList{&c.Join}, "embedded-etcd-join", "Comma-separated client URLs of a running cluster's members: with an empty --data-dir this member adds itself to that cluster (a member add, replacing an old member with its peer URL: itself, wiped) and starts with the existing state, as kubeadm join --control-plane does; --embedded-etcd-initial-cluster is then not read. Ignored once --data-dir holds the member.")
}

// set reports whether any flag of the cluster was given.
func (c *EmbeddedEtcdCluster) set() bool {
	return c.Name != "" || c.AdvertiseClientURL != "" || c.AdvertisePeerURL != "" || c.InitialCluster != "" ||
		c.InitialClusterState != "" || c.InitialClusterToken != "" || len(c.Join) > 0
}

// validateEtcdCluster checks the --embedded-etcd-* cluster flags against
// each other and the listen URLs.
func (o *Options) validateEtcdCluster() error {
	c := o.EtcdCluster
	var errs []error
	if c.Name != "" && strings.ContainsAny(c.Name, "=, ") {
		errs = append(errs, fmt.Errorf("--embedded-etcd-name %q must not hold '=', ',' or spaces", c.Name))
	}
	for _, u := range []struct{ flag, v string }{{"embedded-etcd-advertise-client-url", c.AdvertiseClientURL}, {"embedded-etcd-advertise-peer-url", c.AdvertisePeerURL}} {
		if u.v != "" {
			if err := validateAdvertiseURL(u.v); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", u.flag, err))
			}
		}
	}
	for _, j := range c.Join {
		if err := validateAdvertiseURL(j); err != nil {
			errs = append(errs, fmt.Errorf("--embedded-etcd-join: %w", err))
		}
	}
	switch c.InitialClusterState {
	case "", etcd.ClusterStateNew, etcd.ClusterStateExisting:
	default:
		errs = append(errs, fmt.Errorf("--embedded-etcd-initial-cluster-state %q: must be %q or %q", c.InitialClusterState, etcd.ClusterStateNew, etcd.ClusterStateExisting))
	}
	if len(c.Join) > 0 {
		if c.InitialClusterState == etcd.ClusterStateNew {
			errs = append(errs, errors.New("--embedded-etcd-join starts the member in the existing state; --embedded-etcd-initial-cluster-state=new contradicts it"))
		}
	} else if c.InitialClusterState == etcd.ClusterStateExisting && c.InitialCluster == "" {
		errs = append(errs, errors.New("--embedded-etcd-initial-cluster-state=existing needs --embedded-etcd-initial-cluster (as the member add printed it) or --embedded-etcd-join"))
	}
	multi := c.InitialCluster != "" || len(c.Join) > 0
	if multi {
		// Peers dial the advertise URLs: a wildcard or an unknown port
		// cannot be dialled.
		for _, u := range []struct{ flag, listen, adv, advFlag string }{
			{"embedded-etcd-peer-url", o.EtcdPeerURL, c.AdvertisePeerURL, "embedded-etcd-advertise-peer-url"},
			{"embedded-etcd-client-url", o.EtcdClientURL, c.AdvertiseClientURL, "embedded-etcd-advertise-client-url"},
		} {
			if u.adv != "" {
				continue
			}
			if u.listen == "" {
				errs = append(errs, fmt.Errorf("a member of a multi-member cluster needs --%s (or --%s): its peers must know where it is", u.flag, u.advFlag))
				continue
			}
			if pu, err := url.Parse(u.listen); err == nil {
				if ip := net.ParseIP(pu.Hostname()); (ip != nil && ip.IsUnspecified()) || pu.Port() == "0" {
					errs = append(errs, fmt.Errorf("--%s %q listens on a wildcard address or a free port: give --%s, the URL the peers dial", u.flag, u.listen, u.advFlag))
				}
			}
		}
	}
	if c.InitialCluster != "" {
		members, err := etcd.ParseInitialCluster(c.InitialCluster)
		if err != nil {
			errs = append(errs, fmt.Errorf("--embedded-etcd-initial-cluster: %w", err))
		} else {
			name := c.Name
			if name == "" {
				name = etcd.DefaultMemberName
			}
			peer := c.AdvertisePeerURL
			if peer == "" {
				peer = o.EtcdPeerURL
			}
			switch {
			case members[name] == nil:
				errs = append(errs, fmt.Errorf("--embedded-etcd-initial-cluster does not name this member %q (--embedded-etcd-name)", name))
			case peer != "" && !slices.Contains(members[name], peer):
				errs = append(errs, fmt.Errorf("--embedded-etcd-initial-cluster gives member %q the peer URLs %v, not its advertise peer URL %s", name, members[name], peer))
			}
		}
	}
	return errors.Join(errs...)
}

// validateAdvertiseURL checks a URL other members or clients dial:
// https://HOST:PORT, HOST a name or an IP, a port other than 0.
func validateAdvertiseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%q: the embedded etcd serves TLS with client certificates only; use https://HOST:PORT", s)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q: want https://HOST:PORT", s)
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%q: a wildcard address cannot be dialled", s)
	}
	if n, err := strconv.Atoi(u.Port()); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("%q: port must be a number in [1, 65535]", s)
	}
	if u.Path != "" && u.Path != "/" {
		return fmt.Errorf("%q: no path expected", s)
	}
	return nil
}

// etcdClusterConfig is the etcd package's view of the flags.
func (o *Options) etcdClusterConfig() etcd.ClusterConfig {
	c := o.EtcdCluster
	return etcd.ClusterConfig{
		Name:                c.Name,
		AdvertiseClientURL:  c.AdvertiseClientURL,
		AdvertisePeerURL:    c.AdvertisePeerURL,
		InitialCluster:      c.InitialCluster,
		InitialClusterState: c.InitialClusterState,
		InitialClusterToken: c.InitialClusterToken,
		Join:                slices.Clone(c.Join),
	}
}
