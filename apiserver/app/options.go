package app

import (
	"flag"
	"net"
	"strings"
	"time"

	"github.com/minik8s/minik8s/internal/logging"
)

// Options are the apiserver's settings; flag names follow kube-apiserver.
type Options struct {
	// BindAddress and SecurePort serve HTTPS (SecurePort 0 disables it).
	BindAddress string
	SecurePort  int
	// SecureListener, when set, is where HTTPS is served instead of
	// BindAddress:SecurePort, for one start: tests pass a listener already
	// bound on 127.0.0.1:0, so no port is picked free and bound later (a
	// parallel test could take it in between). Not a flag.
	SecureListener net.Listener
	// CertDir holds the cluster CA and serving certificate, created on first start.
	CertDir string
	// TLSSANs are extra names or IPs of the serving certificate.
	TLSSANs []string
	// WriteKubeconfig, if set, is where the admin kubeconfig is written.
	WriteKubeconfig string
	// EncryptionProviderConfig is kube-apiserver's EncryptionConfiguration file.
	EncryptionProviderConfig string
	// AuditLogPath, if set, receives one JSON line per request (audit.k8s.io/v1 Events).
	AuditLogPath      string
	AuditLogMaxSizeMB int
	// TokenAuthFile is a static token file (token,user,uid,"group1,group2").
	TokenAuthFile string
	// InsecureBindAddress and InsecurePort serve plain HTTP to a trusted
	// local admin, without authentication; loopback only, off by default.
	InsecureBindAddress string
	InsecurePort        int
	AdvertiseAddress    string

	// DataDir holds the embedded etcd's data; ignored with EtcdServers.
	DataDir string
	// EtcdServers, when set, selects an external etcd cluster.
	EtcdServers  []string
	EtcdCAFile   string
	EtcdCertFile string
	EtcdKeyFile  string
	EtcdPrefix   string
	// EtcdClientURL and EtcdPeerURL fix the embedded etcd's listeners
	// (default: free loopback ports).
	EtcdClientURL string
	EtcdPeerURL   string

	EtcdCompactionInterval time.Duration
	MinRequestTimeout      time.Duration
	// WatchBookmarkInterval is how often bookmark-enabled watchers get a BOOKMARK.
	WatchBookmarkInterval time.Duration
	// WatchCacheEvents is the number of recent events each watch cache keeps.
	WatchCacheEvents int
	MaxRequestBytes  int64

	// DefaultNotReadyTolerationSeconds and DefaultUnreachableTolerationSeconds
	// are the tolerationSeconds DefaultTolerationSeconds admission adds.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64

	LogLevel string

	// ServiceClusterIPRange is where Services' ClusterIPs come from; its
	// first address is the "kubernetes" Service's. ServiceNodePortRange is
	// where NodePorts come from.
	ServiceClusterIPRange string
	ServiceNodePortRange  string

	// KubeletClientCertificate and KubeletClientKey are the client
	// certificate the apiserver presents to kubelets for logs and exec
	// (default: apiserver-kubelet-client.crt|key issued into the cert dir).
	KubeletClientCertificate string
	KubeletClientKey         string
	// KubeletPreferredAddressTypes orders the Node address types used to
	// reach a kubelet.
	KubeletPreferredAddressTypes []string
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{
		BindAddress:            "0.0.0.0",
		SecurePort:             6443,
		CertDir:                "/var/lib/minik8s/pki",
		InsecureBindAddress:    "127.0.0.1",
		InsecurePort:           0,
		DataDir:                "/var/lib/minik8s/etcd",
		EtcdPrefix:             "/registry",
		EtcdCompactionInterval: 5 * time.Minute,
		MinRequestTimeout:      30 * time.Minute,
		WatchBookmarkInterval:  time.Minute,
		WatchCacheEvents:       10000,
		MaxRequestBytes:        3 << 20,
		LogLevel:               "info",
		ServiceClusterIPRange:  "10.96.0.0/12",
		ServiceNodePortRange:   "30000-32767",

		KubeletPreferredAddressTypes: []string{"InternalIP", "Hostname"},

		DefaultNotReadyTolerationSeconds:    300,
		DefaultUnreachableTolerationSeconds: 300,
	}
}

type stringList struct{ v *[]string }

func (s stringList) String() string {
	if s.v == nil {
		return ""
	}
	return strings.Join(*s.v, ",")
}

func (s stringList) Set(v string) error {
	*s.v = nil
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s.v = append(*s.v, p)
		}
	}
	return nil
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "address to serve HTTPS on")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "port to serve HTTPS on (0 disables)")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "directory of the cluster CA and serving certificate (created on first start)")
	fs.Var(stringList{&o.TLSSANs}, "tls-san", "comma-separated extra DNS names or IPs for the serving certificate")
	fs.StringVar(&o.WriteKubeconfig, "write-kubeconfig", o.WriteKubeconfig, "write an admin kubeconfig to this path")
	fs.StringVar(&o.EncryptionProviderConfig, "encryption-provider-config", o.EncryptionProviderConfig, "EncryptionConfiguration file: which resources are encrypted in etcd (aescbc, aesgcm, identity)")
	fs.StringVar(&o.AuditLogPath, "audit-log-path", o.AuditLogPath, "write an audit log of every request (JSON lines) to this file")
	fs.IntVar(&o.AuditLogMaxSizeMB, "audit-log-maxsize", o.AuditLogMaxSizeMB, "megabytes of audit log before it is rotated (0: never)")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "static bearer tokens: CSV of token,user,uid,\"group1,group2\"")
	fs.StringVar(&o.InsecureBindAddress, "insecure-bind-address", o.InsecureBindAddress, "loopback address to serve unauthenticated plain HTTP on")
	fs.IntVar(&o.InsecurePort, "insecure-port", o.InsecurePort, "port to serve unauthenticated plain HTTP on, for a local admin (0 disables)")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "A CIDR notation IP range from which to assign service cluster IPs.")
	fs.StringVar(&o.ServiceNodePortRange, "service-node-port-range", o.ServiceNodePortRange, "A port range to reserve for services with NodePort visibility, e.g. '30000-32767'. Inclusive at both ends.")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "address advertised to clients in discovery")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "directory of the embedded etcd's data")
	fs.Var(stringList{&o.EtcdServers}, "etcd-servers", "comma-separated etcd client URLs of an external cluster (default: run embedded etcd)")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "CA bundle to verify the external etcd servers")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "client certificate for the external etcd")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "client key for the external etcd")
	fs.StringVar(&o.EtcdPrefix, "etcd-prefix", o.EtcdPrefix, "prefix of every key in etcd")
	fs.StringVar(&o.EtcdClientURL, "embedded-etcd-client-url", o.EtcdClientURL, "client URL of the embedded etcd (default: a free loopback port)")
	fs.StringVar(&o.EtcdPeerURL, "embedded-etcd-peer-url", o.EtcdPeerURL, "peer URL of the embedded etcd (default: a free loopback port)")
	fs.DurationVar(&o.EtcdCompactionInterval, "etcd-compaction-interval", o.EtcdCompactionInterval, "interval of etcd compaction requests (0 disables)")
	fs.DurationVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout, "minimum watch timeout; each watch gets a random timeout in [1x, 2x)")
	fs.DurationVar(&o.WatchBookmarkInterval, "watch-bookmark-interval", o.WatchBookmarkInterval, "interval of BOOKMARK events to watchers that allow them")
	fs.IntVar(&o.WatchCacheEvents, "watch-cache-events", o.WatchCacheEvents, "recent events kept per resource for watch resumption")
	fs.Int64Var(&o.MaxRequestBytes, "max-request-bytes", o.MaxRequestBytes, "largest accepted request body in bytes")
	fs.Int64Var(&o.DefaultNotReadyTolerationSeconds, "default-not-ready-toleration-seconds", o.DefaultNotReadyTolerationSeconds, "tolerationSeconds of the notReady:NoExecute toleration added to pods without one")
	fs.Int64Var(&o.DefaultUnreachableTolerationSeconds, "default-unreachable-toleration-seconds", o.DefaultUnreachableTolerationSeconds, "tolerationSeconds of the unreachable:NoExecute toleration added to pods without one")
	fs.StringVar(&o.KubeletClientCertificate, "kubelet-client-certificate", o.KubeletClientCertificate, "client certificate for connections to kubelets (default: apiserver-kubelet-client.crt in --cert-dir)")
	fs.StringVar(&o.KubeletClientKey, "kubelet-client-key", o.KubeletClientKey, "key of --kubelet-client-certificate")
	fs.Var(stringList{&o.KubeletPreferredAddressTypes}, "kubelet-preferred-address-types", "list of the preferred NodeAddressTypes to use for kubelet connections")
	fs.Func("log-level", "log level: debug, info, warn or error (default "+o.LogLevel+")", func(s string) error {
		lvl, err := logging.ParseLevel(s)
		if err != nil {
			return err
		}
		o.LogLevel = lvl
		return nil
	})
}
