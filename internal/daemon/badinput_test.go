package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// badCase is one wrong command line: the daemon must exit by itself with
// code, print exactly one line on stderr (nothing on stdout) that contains
// want (the flag or the file at fault), and no panic.
type badCase struct {
	name string
	args []string
	want string
	code int
}

// usage and failure are the exit codes asserted: a wrong command line, and
// a command line whose files are missing or malformed.
const (
	usage   = daemon.ExitUsage
	failure = daemon.ExitFailure
)

// fixtures are files the cases point flags at.
type fixtures struct {
	dir                               string
	missing, garbage, empty, aDir     string
	underFile                         string // a path below a regular file
	badToken, badEncryption, notPEM   string
	kubeletKubeconfig, resolvConf, ca string
	saKey                             string // an ECDSA private key
	// config files: another component's kind, an unknown version; a field
	// of the wrong type, a value the flag refuses, a value Validate
	// refuses, of the scheduler's and the kubelet's kinds
	otherKind, unknownVersion                         string
	schedWrongType, schedBadValue, schedRefused       string
	kubeletWrongType, kubeletBadValue, kubeletRefused string
}

func newFixtures(t *testing.T) fixtures {
	dir := t.TempDir()
	f := fixtures{
		dir:               dir,
		missing:           filepath.Join(dir, "missing.yaml"),
		garbage:           filepath.Join(dir, "garbage.yaml"),
		empty:             filepath.Join(dir, "empty.yaml"),
		aDir:              filepath.Join(dir, "a-directory"),
		underFile:         filepath.Join(dir, "garbage.yaml", "audit.log"),
		badToken:          filepath.Join(dir, "tokens.csv"),
		badEncryption:     filepath.Join(dir, "encryption.yaml"),
		notPEM:            filepath.Join(dir, "not.pem"),
		kubeletKubeconfig: filepath.Join(dir, "kubelet.kubeconfig"),
		resolvConf:        filepath.Join(dir, "resolv.conf"),
		ca:                filepath.Join(dir, "ca.crt"),
		saKey:             filepath.Join(dir, "sa.key"),
		otherKind:         filepath.Join(dir, "other-kind.yaml"),
		unknownVersion:    filepath.Join(dir, "unknown-version.yaml"),
		schedWrongType:    filepath.Join(dir, "sched-wrong-type.yaml"),
		schedBadValue:     filepath.Join(dir, "sched-bad-value.yaml"),
		schedRefused:      filepath.Join(dir, "sched-refused.yaml"),
		kubeletWrongType:  filepath.Join(dir, "kubelet-wrong-type.yaml"),
		kubeletBadValue:   filepath.Join(dir, "kubelet-bad-value.yaml"),
		kubeletRefused:    filepath.Join(dir, "kubelet-refused.yaml"),
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(f.garbage, "{{{ this: is: not [yaml\n")
	write(f.empty, "")
	if err := os.Mkdir(f.aDir, 0o700); err != nil {
		t.Fatal(err)
	}
	write(f.badToken, "only-a-token\n")
	write(f.badEncryption, "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"+
		"- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n      - name: k1\n        secret: not-base64!\n")
	write(f.notPEM, "not a PEM block\n")
	write(f.resolvConf, "nameserver 127.0.0.1\n")
	write(f.otherKind, "apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1\nkind: KubeControllerManagerConfiguration\n")
	write(f.unknownVersion, "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n")
	const sched, kubelet = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
		"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	write(f.schedWrongType, sched+"parallelism: lots\n")
	write(f.schedBadValue, sched+"leaderElection:\n  leaseDuration: soon\n")
	write(f.schedRefused, sched+"percentageOfNodesToScore: 101\n")
	write(f.kubeletWrongType, kubelet+"maxPods: many\n")
	write(f.kubeletBadValue, kubelet+"syncFrequency: soon\n")
	write(f.kubeletRefused, kubelet+"evictionHard:\n  memory.available: lots\n")
	ca, err := pki.NewCA("badinput-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	write(f.ca, string(ca.CertPEM()))
	saKey, err := pki.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	saKeyPEM, err := pki.EncodeKeyPEM(saKey)
	if err != nil {
		t.Fatal(err)
	}
	write(f.saKey, string(saKeyPEM))
	// A kubeconfig that loads; nothing answers at its server.
	kc := kubeconfig.NewForCluster("https://127.0.0.1:1", ca.CertPEM(), "system:node:badinput", kubeconfig.AuthInfo{Token: "x"}, "")
	if err := kubeconfig.Write(f.kubeletKubeconfig, kc); err != nil {
		t.Fatal(err)
	}
	return f
}

// clientCases are the flags of every daemon that talks to the apiserver
// through internal/daemon's ClientOptions.
func clientCases(f fixtures) []badCase {
	return []badCase{
		{"qps not a number", []string{"--kube-api-qps=abc"}, "-kube-api-qps", usage},
		{"qps negative", []string{"--kube-api-qps=-5"}, "-kube-api-qps", usage},
		{"qps NaN", []string{"--kube-api-qps=NaN"}, "-kube-api-qps", usage},
		{"burst negative", []string{"--kube-api-burst=-1"}, "-kube-api-burst", usage},
		{"burst not an integer", []string{"--kube-api-burst=1.5"}, "-kube-api-burst", usage},
		{"master not http", []string{"--master=ftp://example"}, "-master", usage},
		{"master no host", []string{"--master=http://"}, "-master", usage},
		{"kubeconfig missing", []string{"--kubeconfig=" + f.missing}, f.missing, failure},
		{"kubeconfig garbage", []string{"--kubeconfig=" + f.garbage}, f.garbage, failure},
		{"kubeconfig empty", []string{"--kubeconfig=" + f.empty}, f.empty, failure},
		{"kubeconfig a directory", []string{"--kubeconfig=" + f.aDir}, f.aDir, failure},
	}
}

func leaderElectionCases() []badCase {
	return []badCase{
		{"lease duration negative", []string{"--leader-elect-lease-duration=-1s"}, "-leader-elect-lease-duration", usage},
		{"lease duration not a duration", []string{"--leader-elect-lease-duration=abc"}, "-leader-elect-lease-duration", usage},
		{"renew deadline over lease", []string{"--leader-elect-renew-deadline=20s"}, "-leader-elect-renew-deadline", usage},
		{"retry period zero", []string{"--leader-elect-retry-period=0"}, "-leader-elect-retry-period", usage},
		{"leader-elect not a bool", []string{"--leader-elect=maybe"}, "-leader-elect", usage},
		{"lease name empty", []string{"--leader-elect-resource-name="}, "-leader-elect-resource-name", usage},
	}
}

// commonCases apply to every daemon: the command line, and the logs
// flags they all share.
func commonCases() []badCase {
	return []badCase{
		{"unknown flag", []string{"--no-such-flag=1"}, "-no-such-flag", usage},
		{"positional argument", []string{"stray-argument"}, "stray-argument", usage},
		{"log level unknown", []string{"--log-level=loud"}, "loud", usage},
		{"verbosity not a number", []string{"--v=abc"}, "-v", usage},
		{"verbosity negative", []string{"-v", "-1"}, "-v", usage},
		{"logging format unknown", []string{"--logging-format=xml"}, "-logging-format", usage},
		{"version value unknown", []string{"--version=maybe"}, "-version", usage},
	}
}

// configCases are the --config files of the daemons that take one: the
// file is at fault, and named. wrongType has a field of the wrong type;
// badValue a value its flag does not parse (in field); refused a value
// the daemon's validation refuses (in refusedField).
func configCases(f fixtures, wrongType, badValue, field, refused, refusedField string) []badCase {
	return []badCase{
		{"config missing", []string{"--config=" + f.missing}, f.missing, failure},
		{"config a directory", []string{"--config=" + f.aDir}, f.aDir, failure},
		{"config garbage YAML", []string{"--config=" + f.garbage}, f.garbage, failure},
		{"config empty", []string{"--config=" + f.empty}, f.empty, failure},
		{"config other kind", []string{"--config=" + f.otherKind}, f.otherKind, failure},
		{"config unknown apiVersion", []string{"--config=" + f.unknownVersion}, f.unknownVersion, failure},
		{"config wrong field type", []string{"--config=" + wrongType}, wrongType, failure},
		{"config value does not parse", []string{"--config=" + badValue}, badValue + ": " + field, failure},
		{"config value refused", []string{"--config=" + refused}, refused + " (" + refusedField + ")", failure},
	}
}

func apiserverCases(f fixtures) []badCase {
	return append(commonCases(), []badCase{
		{"secure port not a number", []string{"--secure-port=abc"}, "-secure-port", usage},
		{"secure port negative", []string{"--secure-port=-1"}, "-secure-port", usage},
		{"secure port over 65535", []string{"--secure-port=65536"}, "-secure-port", usage},
		{"insecure port negative", []string{"--insecure-port=-1"}, "-insecure-port", usage},
		{"no port at all", []string{"--secure-port=0", "--insecure-port=0"}, "-secure-port", usage},
		{"bind address not an IP", []string{"--bind-address=nowhere"}, "-bind-address", usage},
		{"insecure port not on loopback", []string{"--insecure-port=18080", "--insecure-bind-address=0.0.0.0"}, "-insecure-bind-address", usage},
		{"advertise address not an IP", []string{"--advertise-address=nowhere"}, "-advertise-address", usage},
		{"tls san not a name", []string{"--tls-san=not a name!"}, "-tls-san", usage},
		{"cert dir empty", []string{"--cert-dir="}, "-cert-dir", usage},
		{"audit log maxsize negative", []string{"--audit-log-maxsize=-1"}, "-audit-log-maxsize", usage},
		{"service range not a CIDR", []string{"--service-cluster-ip-range=nope"}, "-service-cluster-ip-range", usage},
		{"service range too small", []string{"--service-cluster-ip-range=10.0.0.0/30"}, "-service-cluster-ip-range", usage},
		{"node port range garbage", []string{"--service-node-port-range=abc"}, "-service-node-port-range", usage},
		{"node port range inverted", []string{"--service-node-port-range=32000-31000"}, "-service-node-port-range", usage},
		{"node port range over 65535", []string{"--service-node-port-range=30000-70000"}, "-service-node-port-range", usage},
		{"etcd servers not a URL", []string{"--etcd-servers=ftp://etcd"}, "-etcd-servers", usage},
		{"etcd servers and embedded URL", []string{"--etcd-servers=http://127.0.0.1:1", "--embedded-etcd-client-url=http://127.0.0.1:0"}, "-embedded-etcd-client-url", usage},
		{"etcd cert without key", []string{"--etcd-servers=http://127.0.0.1:1", "--etcd-certfile=" + f.notPEM}, "-etcd-keyfile", usage},
		{"etcd TLS without servers", []string{"--etcd-cafile=" + f.ca}, "-etcd-cafile", usage},
		{"embedded etcd URL scheme", []string{"--embedded-etcd-client-url=ftp://127.0.0.1:1"}, "-embedded-etcd-client-url", usage},
		{"embedded etcd URL port", []string{"--embedded-etcd-peer-url=https://127.0.0.1:99999"}, "-embedded-etcd-peer-url", usage},
		{"embedded etcd plain HTTP", []string{"--embedded-etcd-client-url=http://127.0.0.1:2379"}, "TLS with client certificates only", usage},
		{"data dir empty", []string{"--data-dir="}, "-data-dir", usage},
		{"compaction interval negative", []string{"--etcd-compaction-interval=-1s"}, "-etcd-compaction-interval", usage},
		{"min request timeout zero", []string{"--min-request-timeout=0"}, "-min-request-timeout", usage},
		{"bookmark interval negative", []string{"--watch-bookmark-interval=-1s"}, "-watch-bookmark-interval", usage},
		{"watch cache events zero", []string{"--watch-cache-events=0"}, "-watch-cache-events", usage},
		{"max request bytes negative", []string{"--max-request-bytes=-1"}, "-max-request-bytes", usage},
		{"max requests inflight negative", []string{"--max-requests-inflight=-1"}, "-max-requests-inflight", usage},
		{"max mutating requests inflight negative", []string{"--max-mutating-requests-inflight=-1"}, "-max-mutating-requests-inflight", usage},
		{"request timeout zero", []string{"--request-timeout=0"}, "-request-timeout", usage},
		{"priority and fairness on", []string{"--enable-priority-and-fairness=true"}, "API Priority and Fairness is not implemented", usage},
		{"toleration seconds negative", []string{"--default-not-ready-toleration-seconds=-1"}, "-default-not-ready-toleration-seconds", usage},
		{"kubelet cert without key", []string{"--kubelet-client-certificate=" + f.notPEM}, "-kubelet-client-key", usage},
		{"kubelet address type unknown", []string{"--kubelet-preferred-address-types=Carrier-Pigeon"}, "-kubelet-preferred-address-types", usage},
		{"encryption config missing", []string{"--encryption-provider-config=" + f.missing}, f.missing, failure},
		{"encryption config garbage", []string{"--encryption-provider-config=" + f.garbage}, f.garbage, failure},
		{"encryption config empty", []string{"--encryption-provider-config=" + f.empty}, f.empty, failure},
		{"encryption config a directory", []string{"--encryption-provider-config=" + f.aDir}, f.aDir, failure},
		{"encryption key not base64", []string{"--encryption-provider-config=" + f.badEncryption}, f.badEncryption, failure},
		{"token file missing", []string{"--token-auth-file=" + f.missing}, f.missing, failure},
		{"token file malformed", []string{"--token-auth-file=" + f.badToken}, f.badToken, failure},
		{"token file a directory", []string{"--token-auth-file=" + f.aDir}, f.aDir, failure},
		{"kubelet client cert missing", []string{"--kubelet-client-certificate=" + f.missing, "--kubelet-client-key=" + f.missing}, "-kubelet-client-certificate", failure},
		{"kubelet client cert not PEM", []string{"--kubelet-client-certificate=" + f.notPEM, "--kubelet-client-key=" + f.notPEM}, "-kubelet-client-certificate", failure},
		{"audit log not creatable", []string{"--audit-log-path=" + f.underFile}, "-audit-log-path", failure},
		{"service account issuer empty", []string{"--service-account-issuer="}, "-service-account-issuer", usage},
		{"service account issuer repeated", []string{"--service-account-issuer=https://a", "--service-account-issuer=https://a"}, "-service-account-issuer", usage},
		{"max token expiration under an hour", []string{"--service-account-max-token-expiration=10m"}, "-service-account-max-token-expiration", usage},
		{"max token expiration not a duration", []string{"--service-account-max-token-expiration=long"}, "-service-account-max-token-expiration", usage},
		{"key file without signing key", []string{"--service-account-key-file=" + f.ca}, "-service-account-signing-key-file", usage},
		{"jwks uri not https", []string{"--service-account-jwks-uri=http://keys.example/jwks"}, "-service-account-jwks-uri", usage},
		{"api audiences empty entry", []string{"--api-audiences=a,,"}, "-api-audiences", usage},
		{"admission plugin unknown", []string{"--disable-admission-plugins=Nope"}, "-disable-admission-plugins", usage},
		{"signing key missing", []string{"--service-account-signing-key-file=" + f.missing}, f.missing, failure},
		{"signing key not PEM", []string{"--service-account-signing-key-file=" + f.notPEM}, f.notPEM, failure},
		{"verification key not PEM", []string{"--service-account-signing-key-file=" + f.saKey, "--service-account-key-file=" + f.notPEM}, f.notPEM, failure},
		{"proxy client cert without key", []string{"--proxy-client-cert-file=" + f.ca}, "-proxy-client-key-file", usage},
		{"proxy client key without cert", []string{"--proxy-client-key-file=" + f.saKey}, "-proxy-client-cert-file", usage},
		{"request header empty entry", []string{"--requestheader-username-headers=X-Remote-User,"}, `"requestheader-username-headers"`, usage},
		{"request header allowed names empty entry", []string{"--requestheader-allowed-names=, "}, `"requestheader-allowed-names"`, usage},
		{"request header uid without the standard", []string{"--requestheader-uid-headers=X-Uid"}, "-requestheader-uid-headers", usage},
		{"proxy client cert missing", []string{"--proxy-client-cert-file=" + f.missing, "--proxy-client-key-file=" + f.missing}, "-proxy-client-cert-file", failure},
		{"proxy client cert not PEM", []string{"--proxy-client-cert-file=" + f.notPEM, "--proxy-client-key-file=" + f.notPEM}, "-proxy-client-cert-file", failure},
		{"request header CA missing", []string{"--requestheader-client-ca-file=" + f.missing}, "-requestheader-client-ca-file", failure},
		{"request header CA not PEM", []string{"--requestheader-client-ca-file=" + f.notPEM}, "-requestheader-client-ca-file", failure},
		// The fixtures' directory holds ca.crt: as the cluster CA, it may
		// not also sign the front proxy unless allowed names say who.
		{"request header CA is the cluster CA", []string{"--cert-dir=" + f.dir, "--requestheader-client-ca-file=" + f.ca}, "-requestheader-allowed-names", failure},
	}...)
}

func schedulerCases(f fixtures) []badCase {
	cases := append(commonCases(), clientCases(f)...)
	cases = append(cases, leaderElectionCases()...)
	cases = append(cases, configCases(f, f.schedWrongType, f.schedBadValue, "leaderElection.leaseDuration", f.schedRefused, "percentageOfNodesToScore")...)
	return append(cases, []badCase{
		{"secure port negative", []string{"--secure-port=-1"}, "-secure-port", usage},
		{"secure port over 65535", []string{"--secure-port=65536"}, "-secure-port", usage},
		{"secure port not a number", []string{"--secure-port=http"}, "-secure-port", usage},
		{"insecure port gone", []string{"--port=10251"}, "-port", usage},
		{"bind address not an IP", []string{"--bind-address=nowhere"}, "-bind-address", usage},
		{"certificate without key", []string{"--tls-cert-file=" + f.ca}, "-tls-private-key-file", usage},
		{"always-allow path with inner *", []string{"--authorization-always-allow-paths=/a*b"}, "-authorization-always-allow-paths", usage},
		{"token cache TTL not a duration", []string{"--authentication-token-webhook-cache-ttl=soon"}, "-authentication-token-webhook-cache-ttl", usage},
		{"client CA missing", []string{"--client-ca-file=" + f.missing}, "-client-ca-file", failure},
		{"client CA not PEM", []string{"--client-ca-file=" + f.notPEM}, "-client-ca-file", failure},
		{"authentication kubeconfig missing", []string{"--authentication-kubeconfig=" + f.missing}, "-authentication-kubeconfig", failure},
		{"authorization kubeconfig missing", []string{"--authorization-kubeconfig=" + f.missing}, "-authorization-kubeconfig", failure},
		{"percentage over 100", []string{"--percentage-of-nodes-to-score=101"}, "-percentage-of-nodes-to-score", usage},
		{"initial backoff negative", []string{"--pod-initial-backoff=-1s"}, "-pod-initial-backoff", usage},
		{"max backoff not a duration", []string{"--pod-max-backoff=soon"}, "-pod-max-backoff", usage},
		{"initial backoff over max", []string{"--pod-initial-backoff=20s", "--pod-max-backoff=1s"}, "-pod-max-backoff", usage},
		{"parallelism zero", []string{"--parallelism=0"}, "-parallelism", usage},
	}...)
}

func controllerManagerCases(f fixtures) []badCase {
	cases := append(commonCases(), clientCases(f)...)
	cases = append(cases, leaderElectionCases()...)
	return append(cases, []badCase{
		{"secure port over 65535", []string{"--secure-port=70000"}, "-secure-port", usage},
		{"insecure port gone", []string{"--port=10252"}, "-port", usage},
		{"bind address not an IP", []string{"--bind-address=nowhere"}, "-bind-address", usage},
		{"client CA not PEM", []string{"--client-ca-file=" + f.notPEM}, "-client-ca-file", failure},
		{"controller unknown", []string{"--controllers=*,nope"}, "nope", usage},
		{"disabled controller unknown", []string{"--controllers=-nope"}, "nope", usage},
		{"concurrent syncs zero", []string{"--concurrent-replicaset-syncs=0"}, "-concurrent-replicaset-syncs", usage},
		{"grace period negative", []string{"--node-monitor-grace-period=-5s"}, "-node-monitor-grace-period", usage},
		{"monitor period zero", []string{"--node-monitor-period=0"}, "-node-monitor-period", usage},
		{"eviction rate negative", []string{"--node-eviction-rate=-1"}, "-node-eviction-rate", usage},
		{"zone threshold over 1", []string{"--unhealthy-zone-threshold=2"}, "-unhealthy-zone-threshold", usage},
		{"large cluster threshold negative", []string{"--large-cluster-size-threshold=-1"}, "-large-cluster-size-threshold", usage},
		{"cluster CIDR garbage", []string{"--cluster-cidr=garbage"}, "-cluster-cidr", usage},
		{"node mask shorter than cluster", []string{"--node-cidr-mask-size=8"}, "-node-cidr-mask-size", usage},
		{"node mask over 32", []string{"--node-cidr-mask-size=33"}, "-node-cidr-mask-size", usage},
		{"resync period zero", []string{"--min-resync-period=0"}, "-min-resync-period", usage},
	}...)
}

func clusterDNSCases(f fixtures) []badCase {
	return append(append(commonCases(), clientCases(f)...), []badCase{
		{"listen garbage", []string{"--listen=garbage"}, "-listen", usage},
		{"listen port over 65535", []string{"--listen=127.0.0.1:99999"}, "-listen", usage},
		{"listen host not an IP", []string{"--listen=nowhere:53"}, "-listen", usage},
		{"domain not a name", []string{"--cluster-domain=bad domain"}, "-cluster-domain", usage},
		{"domain empty", []string{"--cluster-domain="}, "-cluster-domain", usage},
		{"upstream without port", []string{"--upstream=1.1.1.1"}, "-upstream", usage},
		{"upstream port not a number", []string{"--upstream=1.1.1.1:dns"}, "-upstream", usage},
		{"health port negative", []string{"--health-port=-1"}, "-health-port", usage},
		{"health port over 65535", []string{"--health-port=70000"}, "-health-port", usage},
		{"ttl negative", []string{"--ttl=-1"}, "-ttl", usage},
		{"ttl zero", []string{"--ttl=0"}, "-ttl", usage},
		{"ttl over 2^31-1", []string{"--ttl=9999999999"}, "-ttl", usage},
		{"resolv.conf missing", []string{"--resolv-conf=" + f.missing}, f.missing, failure},
		{"resolv.conf a directory", []string{"--resolv-conf=" + f.aDir}, f.aDir, failure},
	}...)
}

func kubeProxyCases(f fixtures) []badCase {
	return append(append(commonCases(), clientCases(f)...), []badCase{
		{"proxy mode unknown", []string{"--proxy-mode=ipvs"}, "-proxy-mode", usage},
		{"cluster CIDR garbage", []string{"--cluster-cidr=garbage"}, "-cluster-cidr", usage},
		{"iptables min sync period negative", []string{"--iptables-min-sync-period=-1s"}, "-iptables-min-sync-period", usage},
		{"iptables sync period zero", []string{"--iptables-sync-period=0"}, "-iptables-sync-period", usage},
		{"pod routes not a bool", []string{"--pod-routes=maybe"}, "-pod-routes", usage},
		{"run firewall not a bool", []string{"--run-firewall=maybe"}, "-run-firewall", usage},
		{"healthz bind address without port", []string{"--healthz-bind-address=0.0.0.0"}, "-healthz-bind-address", usage},
		{"metrics bind address not an IP", []string{"--metrics-bind-address=localhost:10249"}, "-metrics-bind-address", usage},
		{"hostname override not a name", []string{"--hostname-override=Bad_Name"}, "-hostname-override", usage},
	}...)
}

func ingressControllerCases(f fixtures) []badCase {
	return append(append(commonCases(), clientCases(f)...), []badCase{
		{"http port zero", []string{"--http-port=0"}, "-http-port", usage},
		{"https port over 65535", []string{"--https-port=70000"}, "-https-port", usage},
		{"http port not a number", []string{"--http-port=eighty"}, "-http-port", usage},
		{"http and https port the same", []string{"--http-port=8443", "--https-port=8443"}, "-http-port and --https-port", usage},
		{"secure port negative", []string{"--secure-port=-1"}, "-secure-port", usage},
		{"secure port is the http port", []string{"--secure-port=8080", "--http-port=8080"}, "-secure-port", usage},
		{"plain health port gone", []string{"--health-port=10254"}, "-health-port", usage},
		{"bind address not an IP", []string{"--bind-address=nowhere"}, "-bind-address", usage},
		{"certificate without key", []string{"--tls-cert-file=" + f.ca}, "-tls-private-key-file", usage},
		{"controller class without a path", []string{"--controller-class=example.com"}, "-controller-class", usage},
		{"ingress class not a name", []string{"--ingress-class=Bad_Name"}, "-ingress-class", usage},
		{"publish address not an address", []string{"--publish-address=not an address"}, "-publish-address", usage},
		{"client CA missing", []string{"--client-ca-file=" + f.missing}, "-client-ca-file", failure},
		{"client CA not PEM", []string{"--client-ca-file=" + f.notPEM}, "-client-ca-file", failure},
		{"authentication kubeconfig missing", []string{"--authentication-kubeconfig=" + f.missing}, "-authentication-kubeconfig", failure},
		{"authorization kubeconfig garbage", []string{"--authorization-kubeconfig=" + f.garbage}, "-authorization-kubeconfig", failure},
	}...)
}

func kubeletCases(f fixtures) []badCase {
	cases := append(commonCases(), configCases(f, f.kubeletWrongType, f.kubeletBadValue, "syncFrequency", f.kubeletRefused, "evictionHard")...)
	return append(cases, []badCase{
		{"qps negative", []string{"--kube-api-qps=-1"}, "-kube-api-qps", usage},
		{"qps not a number", []string{"--kube-api-qps=abc"}, "-kube-api-qps", usage},
		{"burst negative", []string{"--kube-api-burst=-1"}, "-kube-api-burst", usage},
		{"port zero", []string{"--port=0"}, "-port", usage},
		{"port over 65535", []string{"--port=70000"}, "-port", usage},
		{"address not an IP", []string{"--address=nowhere"}, "-address", usage},
		{"healthz port negative", []string{"--healthz-port=-1"}, "-healthz-port", usage},
		{"healthz address not an IP", []string{"--healthz-bind-address=nowhere"}, "-healthz-bind-address", usage},
		{"node IP not an IP", []string{"--node-ip=nowhere"}, "-node-ip", usage},
		{"node labels garbage", []string{"--node-labels=a=b=c,=x"}, "-node-labels", usage},
		{"node labels restricted", []string{"--node-labels=kubernetes.io/role=master"}, "-node-labels", usage},
		{"taints garbage", []string{"--register-with-taints=key=value:Sometimes"}, "-register-with-taints", usage},
		{"max pods zero", []string{"--max-pods=0"}, "-max-pods", usage},
		{"max pods not a number", []string{"--max-pods=many"}, "-max-pods", usage},
		{"system reserved garbage", []string{"--system-reserved=cpu=lots"}, "-system-reserved", usage},
		{"kube reserved garbage", []string{"--kube-reserved=nonsense"}, "-kube-reserved", usage},
		{"eviction threshold garbage", []string{"--eviction-hard=memory.available>1"}, "-eviction-hard", usage},
		{"status update frequency negative", []string{"--node-status-update-frequency=-1s"}, "-node-status-update-frequency", usage},
		{"status report frequency zero", []string{"--node-status-report-frequency=0"}, "-node-status-report-frequency", usage},
		{"lease duration zero", []string{"--node-lease-duration-seconds=0"}, "-node-lease-duration-seconds", usage},
		{"tls cert without key", []string{"--tls-cert-file=" + f.notPEM}, "-tls-private-key-file", usage},
		{"server not https", []string{"--server=ftp://example"}, "-server", usage},
		{"token malformed", []string{"--token=not-a-token"}, "-token", usage},
		{"token without server", []string{"--token=abcdef.0123456789abcdef"}, "-token", usage},
		{"ca hash malformed", []string{"--discovery-token-ca-cert-hash=md5:00"}, "-discovery-token-ca-cert-hash", usage},
		{"containerd namespace empty", []string{"--containerd-namespace="}, "-containerd-namespace", usage},
		{"root dir empty", []string{"--root-dir="}, "-root-dir", usage},
		{"sandbox image invalid", []string{"--pod-infra-container-image=UPPER/Case::x"}, "-pod-infra-container-image", usage},
		{"cgroup root relative", []string{"--cgroup-root=relative/path"}, "-cgroup-root", usage},
		{"bridge name too long", []string{"--cni-bridge=averyveryverylongname"}, "-cni-bridge", usage},
		{"cluster DNS not an IP", []string{"--cluster-dns=10.96.0.10,nowhere"}, "-cluster-dns", usage},
		{"cluster domain invalid", []string{"--cluster-domain=bad_domain"}, "-cluster-domain", usage},
		{"sync frequency zero", []string{"--sync-frequency=0"}, "-sync-frequency", usage},
		{"backoff initial negative", []string{"--restart-backoff-initial=-1s"}, "-restart-backoff-initial", usage},
		{"backoff initial over max", []string{"--restart-backoff-initial=10m", "--restart-backoff-max=1m"}, "-restart-backoff-max", usage},
		{"non-masquerade CIDR garbage", []string{"--non-masquerade-cidr=garbage"}, "-non-masquerade-cidr", usage},
		{"proxy mode gone (kube-proxy's)", []string{"--proxy-mode=iptables"}, "-proxy-mode", usage},
		{"kubeconfig garbage", []string{"--kubeconfig=" + f.garbage}, f.garbage, failure},
		{"kubeconfig empty", []string{"--kubeconfig=" + f.empty}, f.empty, failure},
		{"kubeconfig a directory", []string{"--kubeconfig=" + f.aDir}, f.aDir, failure},
		{"kubeconfig missing, nothing to join with", []string{"--kubeconfig=" + f.missing}, f.missing, failure},
		{"bootstrap kubeconfig garbage", []string{"--kubeconfig=" + f.missing, "--bootstrap-kubeconfig=" + f.garbage}, f.garbage, failure},
		{"tls cert missing", []string{"--tls-cert-file=" + f.missing, "--tls-private-key-file=" + f.missing}, "-tls-cert-file", failure},
		{"tls cert not PEM", []string{"--tls-cert-file=" + f.notPEM, "--tls-private-key-file=" + f.notPEM}, "-tls-cert-file", failure},
		{"client CA missing", []string{"--client-ca-file=" + f.missing}, "-client-ca-file", failure},
		{"client CA not PEM", []string{"--client-ca-file=" + f.notPEM}, "-client-ca-file", failure},
	}...)
}

// daemonUnderTest is a binary with flags that start it on loopback
// sockets the test holds and temporary directories, so a case that is
// wrongly accepted starts harmlessly (and is caught by the timeout).
type daemonUnderTest struct {
	name, pkg string
	base      func(ls []*net.TCPListener) []string
	listeners int
	cases     []badCase
	// started checks the run with the base flags alone: proof that each
	// case fails for its own flag. out is stderr; running is whether it
	// was still running when stopped.
	started func(t *testing.T, running bool, code int, out string)
}

// stillRunning is started for daemons that can run on this machine without
// an apiserver answering: the base flags keep them up.
func stillRunning(t *testing.T, running bool, code int, out string) {
	if !running {
		t.Errorf("with valid flags it exited (code %d) instead of running:\n%s", code, out)
	}
}

func TestBadInputOneLineNonZeroExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every daemon binary")
	}
	f := newFixtures(t)
	const master = "--master=http://127.0.0.1:1"
	daemons := []daemonUnderTest{
		{
			name: "apiserver", pkg: "github.com/minik8s/minik8s/apiserver", listeners: 1,
			base: func(ls []*net.TCPListener) []string {
				dir := filepath.Join(f.dir, "apiserver")
				return []string{"--data-dir=" + dir + "/etcd", "--cert-dir=" + dir + "/pki",
					"--bind-address=127.0.0.1", "--secure-port=" + daemontest.Port(ls[0])}
			},
			cases:   apiserverCases(f),
			started: stillRunning,
		},
		{
			name: "scheduler", pkg: "github.com/minik8s/minik8s/scheduler", listeners: 1,
			base: func(ls []*net.TCPListener) []string {
				return []string{master, "--bind-address=127.0.0.1", "--secure-port=" + daemontest.Port(ls[0])}
			},
			cases:   schedulerCases(f),
			started: stillRunning,
		},
		{
			name: "controller-manager", pkg: "github.com/minik8s/minik8s/controller-manager", listeners: 1,
			base: func(ls []*net.TCPListener) []string {
				return []string{master, "--bind-address=127.0.0.1", "--secure-port=" + daemontest.Port(ls[0])}
			},
			cases:   controllerManagerCases(f),
			started: stillRunning,
		},
		{
			name: "cluster-dns", pkg: "github.com/minik8s/minik8s/internal/cmd/cluster-dns", listeners: 2,
			base: func(ls []*net.TCPListener) []string {
				return []string{master, "--listen=127.0.0.1:" + daemontest.Port(ls[0]), "--health-port=" + daemontest.Port(ls[1]),
					"--resolv-conf=" + f.resolvConf}
			},
			cases:   clusterDNSCases(f),
			started: stillRunning,
		},
		{
			name: "ingress-controller", pkg: "github.com/minik8s/minik8s/internal/cmd/ingress-controller", listeners: 3,
			base: func(ls []*net.TCPListener) []string {
				return []string{master, "--http-port=" + daemontest.Port(ls[0]), "--https-port=" + daemontest.Port(ls[1]),
					"--bind-address=127.0.0.1", "--secure-port=" + daemontest.Port(ls[2])}
			},
			cases:   ingressControllerCases(f),
			started: stillRunning,
		},
		{
			// Without an apiserver its loops wait for their caches and
			// write no rule.
			name: "kube-proxy", pkg: "github.com/minik8s/minik8s/kube-proxy", listeners: 2,
			base: func(ls []*net.TCPListener) []string {
				return []string{master, "--hostname-override=badinput-node",
					"--healthz-bind-address=127.0.0.1:" + daemontest.Port(ls[0]), "--metrics-bind-address=127.0.0.1:" + daemontest.Port(ls[1])}
			},
			cases:   kubeProxyCases(f),
			started: stillRunning,
		},
		{
			name: "kubelet", pkg: "github.com/minik8s/minik8s/kubelet", listeners: 2,
			base: func(ls []*net.TCPListener) []string {
				dir := filepath.Join(f.dir, "kubelet")
				return []string{"--kubeconfig=" + f.kubeletKubeconfig, "--hostname-override=badinput-node", "--node-ip=127.0.0.1",
					"--address=127.0.0.1", "--port=" + daemontest.Port(ls[0]), "--healthz-port=" + daemontest.Port(ls[1]),
					"--root-dir=" + dir + "/root", "--pod-logs-dir=" + dir + "/logs", "--cni-conf-dir=" + dir + "/net.d",
					"--containerd-address=" + dir + "/no-containerd.sock", "--containerd-namespace=minik8s-badinput"}
			},
			cases: kubeletCases(f),
			// Like the kubelet, it starts without its container runtime
			// and waits for it (the node reports it not ready).
			started: stillRunning,
		},
	}
	bins := map[string]string{}
	for _, d := range daemons {
		bins[d.name] = daemontest.Build(t, d.pkg)
	}
	home := t.TempDir() // no ~/.kube/config
	for _, d := range daemons {
		t.Run(d.name, func(t *testing.T) {
			var ls []*net.TCPListener
			for range d.listeners {
				ls = append(ls, daemontest.Listen(t))
			}
			// --v=2 as Kubernetes manifests pass it, on every daemon.
			base := append(d.base(ls), "--v=2")
			t.Run("help and version", func(t *testing.T) {
				for _, arg := range []string{"--help", "-h", "--version"} {
					r := runDaemon(t, bins[d.name], ls, home, []string{arg}, 30*time.Second)
					want := "\nGlobal flags:\n"
					if arg == "--version" {
						want = "minik8s "
					}
					if r.running || r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, want) {
						t.Errorf("%s: running %v, exit %d, stderr %q, stdout %q", arg, r.running, r.code, r.stderr, r.stdout)
					}
				}
			})
			t.Run("valid flags", func(t *testing.T) {
				r := runDaemon(t, bins[d.name], ls, home, base, 3*time.Second)
				d.started(t, r.running, r.code, r.stderr)
				if hasPanic(r.stdout + r.stderr) {
					t.Errorf("panic:\n%s", r.stderr)
				}
			})
			for _, c := range d.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					r := runDaemon(t, bins[d.name], ls, home, append(append([]string(nil), base...), c.args...), 30*time.Second)
					checkOneLine(t, r, c)
				})
			}
		})
	}
}

type runResult struct {
	running        bool // still running when the time was up (then stopped)
	code           int
	stdout, stderr string
}

// runDaemon runs bin with args for at most d, then stops it with SIGTERM
// (SIGKILL 10 s later).
func runDaemon(t *testing.T, bin string, ls []*net.TCPListener, home string, args []string, d time.Duration) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(), "KUBECONFIG=", "HOME="+home)
	daemontest.Inherit(t, cmd, ls...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := runResult{running: ctx.Err() != nil, stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if err != nil && !r.running && !errors.As(err, &ee) {
		t.Fatalf("run %s: %v", filepath.Base(bin), err)
	}
	if cmd.ProcessState != nil {
		r.code = cmd.ProcessState.ExitCode()
	}
	return r
}

func hasPanic(out string) bool {
	return strings.Contains(out, "panic") || strings.Contains(out, "goroutine ")
}

// checkOneLine asserts what the issue asks of a wrong value: the process
// exits by itself, non-zero (c.code), without a panic, with exactly one
// line on stderr (none on stdout) naming c.want.
func checkOneLine(t *testing.T, r runResult, c badCase) {
	t.Helper()
	if r.running {
		t.Fatalf("%v: still running after 30 s (it started instead of refusing the input):\n%s", c.args, r.stderr)
	}
	if hasPanic(r.stdout + r.stderr) {
		t.Fatalf("%v: panicked:\n%s", c.args, r.stderr)
	}
	if r.code != c.code {
		t.Errorf("%v: exit code %d, want %d", c.args, r.code, c.code)
	}
	if r.stdout != "" {
		t.Errorf("%v: wrote to stdout: %q", c.args, r.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) != 1 || strings.TrimSpace(lines[0]) == "" || !strings.HasSuffix(r.stderr, "\n") {
		t.Fatalf("%v: want exactly one line on stderr, got %d:\n%s", c.args, len(lines), r.stderr)
	}
	if !strings.Contains(lines[0], c.want) {
		t.Errorf("%v: %q does not name %q", c.args, lines[0], c.want)
	}
}
