package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/apiserver/servicealloc"
	"github.com/minik8s/minik8s/apiserver/snapshot"
	"github.com/minik8s/minik8s/internal/daemon"
)

// Validate checks every flag's value, format and combination; it reads no
// file (Start loads what the flags name before it starts anything).
func (o *Options) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(daemon.ValidatePort("secure-port", o.SecurePort, true))
	add(daemon.ValidatePort("insecure-port", o.InsecurePort, true))
	if o.SecurePort == 0 && o.InsecurePort == 0 && o.SecureListener == nil {
		add(errors.New("nothing to serve on: --secure-port and --insecure-port are both 0"))
	}
	if o.SecurePort > 0 {
		add(daemon.ValidateIP("bind-address", o.BindAddress))
		if strings.TrimSpace(o.CertDir) == "" {
			add(errors.New("--cert-dir must not be empty when --secure-port serves HTTPS"))
		}
	}
	if o.InsecurePort > 0 {
		add(checkLoopback(o.InsecureBindAddress))
	}
	if o.PodRoutes && o.SecurePort == 0 && o.SecureListener == nil {
		add(errors.New("--pod-routes needs the secure port: the routes follow the Nodes through it"))
	}
	if o.AdvertiseAddress != "" {
		add(daemon.ValidateIP("advertise-address", o.AdvertiseAddress))
	}
	for _, san := range o.TLSSANs {
		if net.ParseIP(san) == nil && len(naming.IsDNS1123Subdomain(strings.TrimPrefix(san, "*."))) > 0 {
			add(fmt.Errorf("--tls-san %q is neither an IP address nor a DNS name", san))
		}
	}
	if o.AuditLogMaxSizeMB < 0 {
		add(fmt.Errorf("--audit-log-maxsize must be >= 0, got %d", o.AuditLogMaxSizeMB))
	}
	if _, err := servicealloc.New(nil, o.ServiceClusterIPRange, o.ServiceNodePortRange); err != nil {
		add(err)
	}
	add(o.validateEtcd())
	add(o.validateServiceAccounts())
	add(o.Aggregation.validate())
	switch o.EndpointReconcilerType {
	case "", LeaseEndpointReconciler, NoneEndpointReconciler, MasterCountEndpointReconciler:
	default:
		add(fmt.Errorf("--endpoint-reconciler-type: reconciler not implemented: %s (known: %s)", o.EndpointReconcilerType, strings.Join(EndpointReconcilerTypes, ", ")))
	}
	if o.APIServerCount <= 0 {
		add(fmt.Errorf("--apiserver-count should be a positive number, but value '%d' provided", o.APIServerCount))
	}
	for _, name := range o.DisableAdmissionPlugins {
		if !slices.Contains(AdmissionPlugins, name) {
			add(fmt.Errorf("--disable-admission-plugins: unknown admission plugin %q (known: %s)", name, strings.Join(AdmissionPlugins, ", ")))
		}
	}
	for _, d := range []struct {
		flag string
		v    int64
	}{
		{"min-request-timeout", int64(o.MinRequestTimeout)}, {"watch-bookmark-interval", int64(o.WatchBookmarkInterval)},
		{"watch-cache-events", int64(o.WatchCacheEvents)}, {"max-request-bytes", o.MaxRequestBytes},
	} {
		if d.v <= 0 {
			add(fmt.Errorf("--%s must be positive", d.flag))
		}
	}
	if o.MaxRequestsInFlight < 0 {
		add(errors.New("--max-requests-inflight can not be negative value"))
	}
	if o.MaxMutatingRequestsInFlight < 0 {
		add(errors.New("--max-mutating-requests-inflight can not be negative value"))
	}
	if o.RequestTimeout <= 0 {
		// kube-apiserver accepts 0 and then times every request out at once.
		add(fmt.Errorf("--request-timeout must be positive, got %v", o.RequestTimeout))
	}
	if o.EnablePriorityAndFairness {
		add(errors.New("--enable-priority-and-fairness=true: API Priority and Fairness is not implemented; leave it false, and the max-in-flight limits (--max-requests-inflight, --max-mutating-requests-inflight) apply"))
	}
	if o.EtcdCompactionInterval < 0 {
		add(fmt.Errorf("--etcd-compaction-interval must be >= 0 (0 disables), got %v", o.EtcdCompactionInterval))
	}
	if o.EtcdSnapshotSchedule != "" {
		if _, err := snapshot.ParseSchedule(o.EtcdSnapshotSchedule); err != nil {
			add(fmt.Errorf("--etcd-snapshot-schedule: %w", err))
		}
		if o.EtcdSnapshotRetention < 1 {
			add(fmt.Errorf("--etcd-snapshot-retention must be >= 1, got %d", o.EtcdSnapshotRetention))
		}
	}
	for _, t := range []struct {
		flag string
		v    int64
	}{
		{"default-not-ready-toleration-seconds", o.DefaultNotReadyTolerationSeconds},
		{"default-unreachable-toleration-seconds", o.DefaultUnreachableTolerationSeconds},
	} {
		if t.v < 0 {
			add(fmt.Errorf("--%s must be >= 0, got %d", t.flag, t.v))
		}
	}
	if (o.KubeletClientCertificate == "") != (o.KubeletClientKey == "") {
		add(errors.New("--kubelet-client-certificate and --kubelet-client-key must be given together"))
	}
	if len(o.KubeletPreferredAddressTypes) == 0 {
		add(errors.New("--kubelet-preferred-address-types must not be empty"))
	}
	for _, t := range o.KubeletPreferredAddressTypes {
		switch api.NodeAddressType(t) {
		case api.NodeInternalIP, api.NodeHostName, api.NodeExternalIP, api.NodeInternalDNS, api.NodeExternalDNS:
		default:
			add(fmt.Errorf("--kubelet-preferred-address-types: unknown address type %q", t))
		}
	}
	return errors.Join(errs...)
}

// validateServiceAccounts checks the service-account token flags with
// kube-apiserver's rules and words.
func (o *Options) validateServiceAccounts() error {
	var errs []error
	if len(o.ServiceAccountIssuers) == 0 {
		errs = append(errs, errors.New("--service-account-issuer is a required flag"))
	}
	seen := map[string]bool{}
	for _, iss := range o.ServiceAccountIssuers {
		if strings.Contains(iss, ":") {
			if _, err := url.Parse(iss); err != nil {
				errs = append(errs, fmt.Errorf("--service-account-issuer %q contained a ':' but was not a valid URL: %v", iss, err))
				continue
			}
		}
		if iss == "" {
			errs = append(errs, errors.New("--service-account-issuer should not be an empty string"))
			continue
		}
		if seen[iss] {
			errs = append(errs, fmt.Errorf("--service-account-issuer %q is already specified", iss))
		}
		seen[iss] = true
	}
	if o.ServiceAccountJWKSURI != "" {
		if u, err := url.Parse(o.ServiceAccountJWKSURI); err != nil {
			errs = append(errs, fmt.Errorf("--service-account-jwks-uri must be a valid URL: %v", err))
		} else if u.Scheme != "https" {
			errs = append(errs, fmt.Errorf("--service-account-jwks-uri requires https scheme, parsed as: %v", u.String()))
		}
	}
	if len(o.ServiceAccountKeyFiles) > 0 && o.ServiceAccountSigningKeyFile == "" {
		errs = append(errs, errors.New("--service-account-signing-key-file is required when --service-account-key-file is given"))
	}
	if d := o.ServiceAccountMaxTokenExpiration; d != 0 && d < time.Hour {
		errs = append(errs, fmt.Errorf("--service-account-max-token-expiration should not be less than 1h, got %v", d))
	}
	for _, a := range o.APIAudiences {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, errors.New("--api-audiences should not contain an empty string"))
		}
	}
	return errors.Join(errs...)
}

// validateEtcd checks the etcd flags: an external cluster's URLs and TLS
// files, or the embedded server's data dir and listen URLs, not both.
func (o *Options) validateEtcd() error {
	var errs []error
	if len(o.EtcdServers) > 0 {
		for _, s := range o.EtcdServers {
			if err := daemon.ValidateURL(s); err != nil {
				errs = append(errs, fmt.Errorf("--etcd-servers: %w", err))
			}
		}
		if o.EtcdClientURL != "" || o.EtcdPeerURL != "" {
			errs = append(errs, errors.New("--embedded-etcd-client-url and --embedded-etcd-peer-url configure the embedded etcd, which --etcd-servers replaces"))
		}
		if o.EtcdCluster.set() {
			errs = append(errs, errors.New("the --embedded-etcd-* cluster flags configure the embedded etcd, which --etcd-servers replaces"))
		}
		if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
			errs = append(errs, errors.New("--etcd-certfile and --etcd-keyfile must be given together"))
		}
		return errors.Join(errs...)
	}
	if o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "" {
		errs = append(errs, errors.New("--etcd-cafile, --etcd-certfile and --etcd-keyfile secure --etcd-servers, which is not set"))
	}
	if strings.TrimSpace(o.DataDir) == "" {
		errs = append(errs, errors.New("--data-dir must not be empty (the embedded etcd stores there)"))
	}
	if strings.TrimSpace(o.CertDir) == "" {
		errs = append(errs, errors.New("--cert-dir must not be empty (the embedded etcd's certificates are kept in its etcd/ directory)"))
	}
	for _, u := range []struct{ flag, v string }{{"embedded-etcd-client-url", o.EtcdClientURL}, {"embedded-etcd-peer-url", o.EtcdPeerURL}} {
		if u.v != "" {
			if err := validateListenURL(u.v); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", u.flag, err))
			}
		}
	}
	errs = append(errs, o.validateEtcdCluster())
	return errors.Join(errs...)
}

// validateListenURL checks an embedded etcd listen URL: https://IP:PORT
// (port 0: any free port). The embedded etcd serves TLS with client
// certificates only, so http and unix sockets are refused.
func validateListenURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "https":
	case "http", "unix", "unixs":
		return fmt.Errorf("%q: the embedded etcd serves TLS with client certificates only; use https://IP:PORT", s)
	default:
		return fmt.Errorf("%q: scheme must be https", s)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port must be a number in [0, 65535]", s)
	}
	if host != "localhost" && net.ParseIP(host) == nil {
		return fmt.Errorf("%q: host must be an IP address", s)
	}
	return nil
}

// NewCommand is the apiserver's command line: flags, validation, run.
func NewCommand() daemon.Command {
	opts := DefaultOptions()
	return daemon.Command{
		Name: "apiserver",
		Long: `The apiserver serves the minik8s API with Kubernetes' paths and semantics:
authentication, authorization and admission in front of storage in etcd
(embedded by default, or an external cluster with --etcd-servers), with
watch caches and the proxy to kubelets for logs and exec.`,
		Flags:    opts.AddFlags,
		Validate: opts.Validate,
		Run:      func(ctx context.Context, log *slog.Logger) error { return Run(ctx, opts, log) },
		// "apiserver snapshot save|restore|status": etcd backups;
		// "apiserver certs": the PKI and kubeconfigs before a first start.
		Subcommands: []*cobra.Command{snapshot.NewCommand(), newCertsCommand(), newEtcdCommand()},
	}
}
