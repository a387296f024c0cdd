package app

import (
	"net"
	"strings"
	"time"

	"github.com/minik8s/minik8s/apiserver/snapshot"
	"github.com/minik8s/minik8s/internal/daemon"
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
	// EtcdCluster makes the embedded etcd one member of a multi-member
	// cluster (see etcd.go); the zero value is the single member.
	EtcdCluster EmbeddedEtcdCluster
	// SharedCertDir is where the control-plane members share the
	// cluster-wide CAs and keys (see sharedcerts.go); empty: not shared.
	SharedCertDir string

	EtcdCompactionInterval time.Duration
	// EtcdSnapshotSchedule is the cron expression of scheduled etcd
	// snapshots ("" disables them), EtcdSnapshotRetention how many are
	// kept, EtcdSnapshotDir where (default: "snapshots" beside DataDir).
	EtcdSnapshotSchedule  string
	EtcdSnapshotRetention int
	EtcdSnapshotDir       string

	MinRequestTimeout time.Duration
	// WatchBookmarkInterval is how often bookmark-enabled watchers get a BOOKMARK.
	WatchBookmarkInterval time.Duration
	// WatchCacheEvents is the number of recent events each watch cache keeps.
	WatchCacheEvents int
	MaxRequestBytes  int64
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight limit the
	// read-only and the other requests served at once (0: no limit), and
	// RequestTimeout is a request's deadline; long-running requests are
	// exempt from both (see apiserver/server's withMaxInFlight).
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	RequestTimeout              time.Duration
	// EnablePriorityAndFairness must stay false: API Priority and Fairness
	// is not implemented, the max-in-flight limits are.
	EnablePriorityAndFairness bool
	// ServingIdleTimeout, when set, replaces the 90 s after which an idle
	// keep-alive connection is closed (daemon.IdleTimeout); tests shorten
	// it. Not a flag, as in kube-apiserver.
	ServingIdleTimeout time.Duration

	// DefaultNotReadyTolerationSeconds and DefaultUnreachableTolerationSeconds
	// are the tolerationSeconds DefaultTolerationSeconds admission adds.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64

	// ServiceClusterIPRange is where Services' ClusterIPs come from; its
	// first address is the "kubernetes" Service's. ServiceNodePortRange is
	// where NodePorts come from.
	ServiceClusterIPRange string
	ServiceNodePortRange  string

	// Aggregation: the front-proxy client certificate presented to
	// extension apiservers and the request-header authentication settings
	// published for them in kube-system/extension-apiserver-authentication
	// (see aggregation.go). Empty: front-proxy-* made in CertDir.
	Aggregation AggregationOptions

	// KubeletClientCertificate and KubeletClientKey are the client
	// certificate the apiserver presents to kubelets for logs and exec
	// (default: apiserver-kubelet-client.crt|key issued into the cert dir).
	KubeletClientCertificate string
	KubeletClientKey         string
	// KubeletCertificateAuthority is kube's --kubelet-certificate-authority:
	// a CA bundle the kubelets' serving certificates must chain to, for
	// the address dialled (logs, exec, attach, port-forward). Unset, they
	// are not verified, as in Kubernetes.
	KubeletCertificateAuthority string
	// ApproveKubeletServingCertificates approves kubelet-serving CSRs a
	// node files for its own name and addresses (apiserver/csr): minik8s'
	// stand-in for the approver add-on Kubernetes leaves this to.
	ApproveKubeletServingCertificates bool
	// DisableAdmissionPlugins turns off admission plugins that are on by
	// default (see AdmissionPlugins).
	DisableAdmissionPlugins []string
	// AdmissionControlConfigFile is an AdmissionConfiguration
	// (apiserver.config.k8s.io/v1) with the plugins' configurations
	// (PodSecurity's defaults and exemptions).
	AdmissionControlConfigFile string

	// ServiceAccountKeyFiles verify service-account tokens besides the
	// signing key; ServiceAccountSigningKeyFile signs them. Neither given:
	// sa.key and sa.pub in CertDir, made on first start.
	ServiceAccountKeyFiles       []string
	ServiceAccountSigningKeyFile string
	// ServiceAccountIssuers are the accepted "iss" values; the first signs.
	ServiceAccountIssuers []string
	// ServiceAccountJWKSURI overrides the jwks_uri of the OIDC discovery
	// document (default: this apiserver's /openid/v1/jwks).
	ServiceAccountJWKSURI string
	// ServiceAccountMaxTokenExpiration caps a TokenRequest's lifetime (0: none).
	ServiceAccountMaxTokenExpiration time.Duration
	// ServiceAccountExtendTokenExpiration extends the tokens admission asks
	// for (3607 s, bound to a pod) to a year, with a warnafter claim.
	ServiceAccountExtendTokenExpiration bool
	// APIAudiences are the audiences of tokens for this API (default: the
	// issuers).
	APIAudiences []string

	// KubeletPreferredAddressTypes orders the Node address types used to
	// reach a kubelet.
	KubeletPreferredAddressTypes []string

	// EndpointReconcilerType is how the kubernetes Service's endpoints
	// are kept: "lease" (the default) or "none" (see endpoints_reconciler.go).
	// EndpointReconcilerInterval and EndpointReconcilerTTL, not flags as in
	// kube-apiserver, are how often an apiserver renews its lease and how
	// long one lives (default 10 s and 15 s); tests shorten them.
	EndpointReconcilerType     string
	EndpointReconcilerInterval time.Duration
	EndpointReconcilerTTL      time.Duration
	// APIServerCount is how many addresses the master-count reconciler
	// keeps (--apiserver-count, deprecated).
	APIServerCount int

	// PodRoutes keeps routes to every Node's pod CIDR in this host's
	// network namespace (see podroutes.go).
	PodRoutes bool

	// Profiling serves Go's profiles at /debug/pprof/ (kube-apiserver's
	// --profiling, on by default), behind authorization as the
	// non-resource URL.
	Profiling bool
}

// DefaultServiceAccountIssuer is the issuer of service-account tokens when
// --service-account-issuer is not given (kubeadm's).
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

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
		EtcdSnapshotSchedule:   snapshot.DefaultSchedule,
		EtcdSnapshotRetention:  snapshot.DefaultRetention,
		MinRequestTimeout:      30 * time.Minute,
		WatchBookmarkInterval:  time.Minute,
		WatchCacheEvents:       10000,
		MaxRequestBytes:        3 << 20,
		Profiling:              true,

		MaxRequestsInFlight:         400,
		MaxMutatingRequestsInFlight: 200,
		RequestTimeout:              time.Minute,

		ServiceClusterIPRange: "10.96.0.0/12",
		ServiceNodePortRange:  "30000-32767",

		EndpointReconcilerType: LeaseEndpointReconciler,
		APIServerCount:         1,

		KubeletPreferredAddressTypes: []string{"InternalIP", "Hostname"},

		ServiceAccountIssuers:               []string{DefaultServiceAccountIssuer},
		ServiceAccountExtendTokenExpiration: true,

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

func (stringList) Type() string { return "strings" }

// AddFlags registers the options in kube-apiserver's --help sections.
func (o *Options) AddFlags(fss *daemon.FlagSets) {
	fs := fss.FlagSet("generic")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Enable profiling via web interface host:port/debug/pprof/")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "The IP address advertised to clients in discovery and as the kubernetes Service's endpoint.")
	fs.DurationVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout, "The minimum watch timeout; each watch gets a random timeout in [1x, 2x).")
	fs.Int64Var(&o.MaxRequestBytes, "max-request-bytes", o.MaxRequestBytes, "The largest accepted request body, in bytes.")
	fs.DurationVar(&o.WatchBookmarkInterval, "watch-bookmark-interval", o.WatchBookmarkInterval, "The interval of BOOKMARK events to watchers that allow them.")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "The maximum number of non-mutating requests in flight (watches, logs, exec and proxies not counted); more are answered 429 with Retry-After, but for system:masters. A zero value disables the limit completely.")
	fs.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInFlight, "The maximum number of mutating requests in flight; more are answered 429 with Retry-After, but for system:masters. A zero value disables the limit completely.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "The duration a handler must keep a request open before timing it out with 504 (long-running requests excepted); a request's ?timeout= may only shorten it.")
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness, "API Priority and Fairness is not implemented: must be false (kube-apiserver's default is true); the max-in-flight limits (--max-requests-inflight, --max-mutating-requests-inflight) apply instead.")

	fs = fss.FlagSet("etcd")
	fs.Var(stringList{&o.EtcdServers}, "etcd-servers", "Comma-separated etcd client URLs of an external cluster (default: run embedded etcd).")
	fs.StringVar(&o.EtcdCAFile, "etcd-cafile", o.EtcdCAFile, "SSL Certificate Authority file used to secure etcd communication.")
	fs.StringVar(&o.EtcdCertFile, "etcd-certfile", o.EtcdCertFile, "SSL certification file used to secure etcd communication.")
	fs.StringVar(&o.EtcdKeyFile, "etcd-keyfile", o.EtcdKeyFile, "SSL key file used to secure etcd communication.")
	fs.StringVar(&o.EtcdPrefix, "etcd-prefix", o.EtcdPrefix, "The prefix to prepend to all resource paths in etcd.")
	fs.DurationVar(&o.EtcdCompactionInterval, "etcd-compaction-interval", o.EtcdCompactionInterval, "The interval of compaction requests; 0 disables compaction from the apiserver.")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "The directory of the embedded etcd's data.")
	fs.StringVar(&o.EtcdClientURL, "embedded-etcd-client-url", o.EtcdClientURL, "The client URL of the embedded etcd, https://IP:PORT (default: a free loopback port). It requires client certificates of etcd/ca.crt in --cert-dir.")
	fs.StringVar(&o.EtcdPeerURL, "embedded-etcd-peer-url", o.EtcdPeerURL, "The peer URL of the embedded etcd, https://IP:PORT (default: a free loopback port). It requires peer certificates of etcd/ca.crt in --cert-dir.")
	o.EtcdCluster.addFlags(fs)
	fs.StringVar(&o.EncryptionProviderConfig, "encryption-provider-config", o.EncryptionProviderConfig, "The EncryptionConfiguration file: which resources are encrypted in etcd (aescbc, aesgcm, identity).")
	fs.IntVar(&o.WatchCacheEvents, "watch-cache-events", o.WatchCacheEvents, "The number of recent events kept per resource for watch resumption.")
	fs.StringVar(&o.EtcdSnapshotSchedule, "etcd-snapshot-schedule", o.EtcdSnapshotSchedule, "The cron expression of scheduled etcd snapshots, as k3s's (empty: none); \"apiserver snapshot save\" takes one at any time.")
	fs.IntVar(&o.EtcdSnapshotRetention, "etcd-snapshot-retention", o.EtcdSnapshotRetention, "The number of scheduled etcd snapshots to keep.")
	fs.StringVar(&o.EtcdSnapshotDir, "etcd-snapshot-dir", o.EtcdSnapshotDir, "The directory of scheduled etcd snapshots, named etcd-snapshot-HOSTNAME-UNIXTIME (default: snapshots beside --data-dir).")

	fs = fss.FlagSet("secure serving")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address to serve HTTPS on.")
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port to serve HTTPS on (0 disables).")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "The directory of the cluster CA and the serving certificate, and of the embedded etcd's PKI in etcd/ and apiserver-etcd-client.crt (created on first start).")
	fs.StringVar(&o.SharedCertDir, "shared-cert-dir", o.SharedCertDir, "A directory the control-plane members share (a volume), holding the cluster-wide CAs and keys kubeadm copies to a joining control-plane node: ca.crt|key, sa.key|pub, front-proxy-ca.crt|key, etcd/ca.crt|key. The first member to start writes its own there; every other copies them into --cert-dir before making its own serving, peer and client certificates. A member whose --cert-dir holds different ones refuses to start.")
	fs.Var(stringList{&o.TLSSANs}, "tls-san", "Comma-separated extra DNS names or IPs of the serving certificate.")

	fs = fss.FlagSet("insecure serving")
	fs.StringVar(&o.InsecureBindAddress, "insecure-bind-address", o.InsecureBindAddress, "The loopback address to serve unauthenticated plain HTTP on.")
	fs.IntVar(&o.InsecurePort, "insecure-port", o.InsecurePort, "The port to serve unauthenticated plain HTTP on, for a local admin (0 disables).")

	fs = fss.FlagSet("auditing")
	fs.StringVar(&o.AuditLogPath, "audit-log-path", o.AuditLogPath, "If set, every request is logged to this file as a JSON line (audit.k8s.io/v1 Event).")
	fs.IntVar(&o.AuditLogMaxSizeMB, "audit-log-maxsize", o.AuditLogMaxSizeMB, "The maximum size in megabytes of the audit log file before it is rotated (0: never).")

	fs = fss.FlagSet("authentication")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "Static bearer tokens: a CSV file of token,user,uid,\"group1,group2\".")
	fs.StringArrayVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles, "File containing PEM-encoded public keys (RSA or ECDSA) or certificates, used to verify ServiceAccount tokens besides the signing key. May be specified multiple times.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile, "Path to the file that contains the current private key of the service account token issuer (default: sa.key in --cert-dir, generated on first start).")
	fs.StringArrayVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers, "Identifier of the service account token issuer: the iss claim of issued tokens. May be specified multiple times; the first is used to sign, all are accepted.")
	fs.StringVar(&o.ServiceAccountJWKSURI, "service-account-jwks-uri", o.ServiceAccountJWKSURI, "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration, for relying parties that fetch the keys elsewhere (must be https).")
	fs.DurationVar(&o.ServiceAccountMaxTokenExpiration, "service-account-max-token-expiration", o.ServiceAccountMaxTokenExpiration, "The maximum validity duration of a token created by the service account token issuer (0: no limit).")
	fs.BoolVar(&o.ServiceAccountExtendTokenExpiration, "service-account-extend-token-expiration", o.ServiceAccountExtendTokenExpiration, "Extend the expiration of admission-injected projected tokens to one year, with a warnafter claim at the requested expiry.")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences, "Identifiers of the API. Service account tokens must carry one of them as audience (default: the service account issuers).")

	o.Aggregation.addFlags(fss.FlagSet("aggregation"))

	fs = fss.FlagSet("admission")
	fs.Var(stringList{&o.DisableAdmissionPlugins}, "disable-admission-plugins", "Comma-separated admission plugins to turn off, of: "+strings.Join(AdmissionPlugins, ", ")+".")
	fs.StringVar(&o.AdmissionControlConfigFile, "admission-control-config-file", o.AdmissionControlConfigFile, "File with admission control configuration (an AdmissionConfiguration, apiserver.config.k8s.io/v1).")

	fs = fss.FlagSet("misc")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "A CIDR notation IP range from which to assign service cluster IPs.")
	fs.StringVar(&o.EndpointReconcilerType, "endpoint-reconciler-type", o.EndpointReconcilerType, "Use an endpoint reconciler ("+strings.Join(EndpointReconcilerTypes, ", ")+") master-count is deprecated, and will be removed in a future version.")
	fs.IntVar(&o.APIServerCount, "apiserver-count", o.APIServerCount, "The number of apiservers running in the cluster, must be a positive number. (In use when --endpoint-reconciler-type=master-count is enabled.)")
	_ = fs.MarkDeprecated("apiserver-count", "apiserver-count is deprecated and will be removed in a future version.")
	fs.StringVar(&o.ServiceNodePortRange, "service-node-port-range", o.ServiceNodePortRange, "A port range to reserve for services with NodePort visibility, e.g. '30000-32767'. Inclusive at both ends.")
	fs.Int64Var(&o.DefaultNotReadyTolerationSeconds, "default-not-ready-toleration-seconds", o.DefaultNotReadyTolerationSeconds, "The tolerationSeconds of the notReady:NoExecute toleration added to pods without one.")
	fs.Int64Var(&o.DefaultUnreachableTolerationSeconds, "default-unreachable-toleration-seconds", o.DefaultUnreachableTolerationSeconds, "The tolerationSeconds of the unreachable:NoExecute toleration added to pods without one.")
	fs.StringVar(&o.KubeletClientCertificate, "kubelet-client-certificate", o.KubeletClientCertificate, "The client certificate for connections to kubelets (default: apiserver-kubelet-client.crt in --cert-dir).")
	fs.StringVar(&o.KubeletClientKey, "kubelet-client-key", o.KubeletClientKey, "The key of --kubelet-client-certificate.")
	fs.StringVar(&o.KubeletCertificateAuthority, "kubelet-certificate-authority", o.KubeletCertificateAuthority, "Path to a cert file for the certificate authority.")
	fs.BoolVar(&o.ApproveKubeletServingCertificates, "approve-kubelet-serving-certificates", o.ApproveKubeletServingCertificates, "Approve the kubernetes.io/kubelet-serving CertificateSigningRequests a node (system:node:NAME) files for itself when every subject alternative name is one of its Node's status.addresses, and deny them otherwise (minik8s' stand-in for a kubelet serving certificate approver add-on; Kubernetes approves none by itself).")
	fs.Var(stringList{&o.KubeletPreferredAddressTypes}, "kubelet-preferred-address-types", "List of the preferred NodeAddressTypes to use for kubelet connections.")
	fs.StringVar(&o.WriteKubeconfig, "write-kubeconfig", o.WriteKubeconfig, "If set, an admin kubeconfig is written to this path.")
	fs.BoolVar(&o.PodRoutes, "pod-routes", o.PodRoutes, "Keep routes to every Node's spec.podCIDR via its InternalIP in this host's network namespace (host-gateway pod networking, as the kubelet's --pod-routes), so that admission webhooks and aggregated APIs served by pods are reached at their pod IPs when this host is not a node. Needs CAP_NET_ADMIN and the secure port.")
}
