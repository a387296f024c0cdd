package app

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
)

// The aggregation flags are refused as kube-apiserver v1.37 refuses them
// (RequestHeaderAuthenticationOptions.Validate), with its words; the proxy
// client certificate and key come together.
func TestAggregationValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    AggregationOptions
		want string // "" when valid
	}{
		{"nothing", AggregationOptions{}, ""},
		{"kubeadm's", AggregationOptions{ProxyClientCertFile: "c", ProxyClientKeyFile: "k", RequestHeaderClientCAFile: "ca",
			RequestHeaderAllowedNames: []string{"front-proxy-client"}, RequestHeaderUsernameHeaders: []string{"X-Remote-User"},
			RequestHeaderGroupHeaders: []string{"X-Remote-Group"}, RequestHeaderExtraHeadersPrefix: []string{"X-Remote-Extra-"},
			RequestHeaderUIDHeaders: []string{"x-remote-uid"}}, ""},
		// kube-apiserver takes both: the aggregator then presents no
		// certificate, or extension apiservers are told nothing.
		{"request-header CA without proxy certificate", AggregationOptions{RequestHeaderClientCAFile: "ca"}, ""},
		{"proxy certificate without request-header CA", AggregationOptions{ProxyClientCertFile: "c", ProxyClientKeyFile: "k"}, ""},
		{"certificate without key", AggregationOptions{ProxyClientCertFile: "c"},
			"--proxy-client-cert-file and --proxy-client-key-file must be given together"},
		{"key without certificate", AggregationOptions{ProxyClientKeyFile: "k"},
			"--proxy-client-cert-file and --proxy-client-key-file must be given together"},
		{"empty username header", AggregationOptions{RequestHeaderUsernameHeaders: []string{"X-Remote-User", " "}},
			`empty value in "requestheader-username-headers"`},
		{"empty group header", AggregationOptions{RequestHeaderGroupHeaders: []string{""}}, `empty value in "requestheader-group-headers"`},
		{"empty extra prefix", AggregationOptions{RequestHeaderExtraHeadersPrefix: []string{""}}, `empty value in "requestheader-extra-headers-prefix"`},
		{"empty allowed name", AggregationOptions{RequestHeaderAllowedNames: []string{"a", ""}}, `empty value in "requestheader-allowed-names"`},
		{"uid headers without the standard", AggregationOptions{RequestHeaderUIDHeaders: []string{"X-Uid"}},
			"--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.validate()
			if got := ""; err != nil {
				got = err.Error()
				if got != tc.want {
					t.Errorf("validate() = %q, want %q", got, tc.want)
				}
			} else if tc.want != "" {
				t.Errorf("validate() = nil, want %q", tc.want)
			}
		})
	}
	// Headers extension apiservers ignore are only warned about, as kube does.
	o := AggregationOptions{RequestHeaderUsernameHeaders: []string{"X-User"}, RequestHeaderGroupHeaders: []string{"X-Remote-Group"},
		RequestHeaderExtraHeadersPrefix: []string{"X-Extra-"}}
	want := []string{
		"--requestheader-username-headers is set without specifying the standard X-Remote-User header - API aggregation will not work",
		"--requestheader-extra-headers-prefix is set without specifying the standard X-Remote-Extra- header prefix - API aggregation will not work",
	}
	if got := o.warnings(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

// The files: the proxy client pair is loaded before anything starts; a
// request-header CA sharing a certificate with the cluster CA needs
// allowed names; a proxy certificate the request-header CA did not sign
// is warned about.
func TestFrontProxyFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cluster, err := pki.NewCA("cluster", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	front, err := pki.NewCA("front-proxy", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "pki")
	if err := cluster.WriteFiles(certDir); err != nil {
		t.Fatal(err)
	}
	clusterCA := write("cluster-ca.crt", cluster.CertPEM())
	frontCA := write("front-ca.crt", front.CertPEM())
	both := write("both.crt", append(front.CertPEM(), cluster.CertPEM()...))
	certPEM, keyPEM, err := front.IssueClient("front-proxy-client", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	proxyCert, proxyKey := write("proxy.crt", certPEM), write("proxy.key", keyPEM)

	run := func(o AggregationOptions) (logs string, err error) {
		var buf bytes.Buffer
		opts := DefaultOptions()
		opts.CertDir = certDir
		opts.Aggregation = o
		a := New(opts, nil, slog.New(slog.NewTextHandler(&buf, nil)))
		if err := a.loadFrontProxyFiles(); err != nil {
			return buf.String(), err
		}
		a.checkProxyCertTrusted()
		return buf.String(), nil
	}
	const overlap = "--requestheader-client-ca-file and the cluster CA (ca.crt in --cert-dir) contain overlapping certificates; " +
		"--requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users"
	for _, tc := range []struct {
		name    string
		o       AggregationOptions
		err     string
		warning string
	}{
		{"kubeadm's", AggregationOptions{ProxyClientCertFile: proxyCert, ProxyClientKeyFile: proxyKey, RequestHeaderClientCAFile: frontCA,
			RequestHeaderAllowedNames: []string{"front-proxy-client"}}, "", ""},
		{"the cluster CA", AggregationOptions{RequestHeaderClientCAFile: clusterCA}, overlap, ""},
		{"a bundle holding the cluster CA", AggregationOptions{RequestHeaderClientCAFile: both}, overlap, ""},
		{"the cluster CA with allowed names", AggregationOptions{RequestHeaderClientCAFile: clusterCA, RequestHeaderAllowedNames: []string{"proxy"}}, "", ""},
		{"CA missing", AggregationOptions{RequestHeaderClientCAFile: filepath.Join(dir, "nope.crt")}, "--requestheader-client-ca-file: open " + filepath.Join(dir, "nope.crt") + ": no such file or directory", ""},
		{"CA not PEM", AggregationOptions{RequestHeaderClientCAFile: proxyKey}, "--requestheader-client-ca-file " + proxyKey + ": no PEM certificate found", ""},
		{"proxy key pair missing", AggregationOptions{ProxyClientCertFile: filepath.Join(dir, "nope.crt"), ProxyClientKeyFile: proxyKey},
			"--proxy-client-cert-file: open " + filepath.Join(dir, "nope.crt") + ": no such file or directory", ""},
		{"proxy certificate not signed by the request-header CA", AggregationOptions{ProxyClientCertFile: proxyCert, ProxyClientKeyFile: proxyKey,
			RequestHeaderClientCAFile: clusterCA, RequestHeaderAllowedNames: []string{"front-proxy-client"}},
			"", "--proxy-client-cert-file is not signed by --requestheader-client-ca-file: extension apiservers will refuse the aggregator's requests"},
		{"proxy certificate of a name not allowed", AggregationOptions{ProxyClientCertFile: proxyCert, ProxyClientKeyFile: proxyKey,
			RequestHeaderClientCAFile: frontCA, RequestHeaderAllowedNames: []string{"someone-else"}},
			"", "--proxy-client-cert-file has a common name --requestheader-allowed-names does not list: extension apiservers will refuse the aggregator's requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs, err := run(tc.o)
			if got := ""; err != nil || tc.err != "" {
				if err != nil {
					got = err.Error()
				}
				if got != tc.err {
					t.Errorf("error = %q, want %q", got, tc.err)
				}
			}
			if tc.warning == "" && strings.Contains(logs, "level=WARN") {
				t.Errorf("unexpected warning: %s", logs)
			}
			if tc.warning != "" && !strings.Contains(logs, tc.warning) {
				t.Errorf("logs %q, want the warning %q", logs, tc.warning)
			}
		})
	}
}
