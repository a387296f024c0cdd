package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/aggregator"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/internal/pki"
)

// AggregationOptions are kube-apiserver's aggregation flags.
type AggregationOptions struct {
	// ProxyClientCertFile and ProxyClientKeyFile are the client
	// certificate the aggregator presents to extension apiservers
	// (default: front-proxy-client.crt|key, with front-proxy-ca, made in
	// the cert dir).
	ProxyClientCertFile string
	ProxyClientKeyFile  string
	// The request-header authentication extension apiservers are told to
	// accept (published in kube-system/extension-apiserver-authentication).
	// With the generated front-proxy PKI they default to kubeadm's: the
	// front-proxy CA, front-proxy-client, X-Remote-User, X-Remote-Group,
	// X-Remote-Extra-.
	RequestHeaderClientCAFile       string
	RequestHeaderAllowedNames       []string
	RequestHeaderUsernameHeaders    []string
	RequestHeaderGroupHeaders       []string
	RequestHeaderExtraHeadersPrefix []string
	RequestHeaderUIDHeaders         []string
}

func (o *AggregationOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ProxyClientCertFile, "proxy-client-cert-file", o.ProxyClientCertFile, "Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request (default: front-proxy-client.crt in --cert-dir, made with a front-proxy CA).")
	fs.StringVar(&o.ProxyClientKeyFile, "proxy-client-key-file", o.ProxyClientKeyFile, "Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request.")
	fs.StringVar(&o.RequestHeaderClientCAFile, "requestheader-client-ca-file", o.RequestHeaderClientCAFile, "Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers.")
	fs.StringSliceVar(&o.RequestHeaderAllowedNames, "requestheader-allowed-names", o.RequestHeaderAllowedNames, "List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.")
	fs.StringSliceVar(&o.RequestHeaderUsernameHeaders, "requestheader-username-headers", o.RequestHeaderUsernameHeaders, "List of request headers to inspect for usernames. X-Remote-User is common.")
	fs.StringSliceVar(&o.RequestHeaderGroupHeaders, "requestheader-group-headers", o.RequestHeaderGroupHeaders, "List of request headers to inspect for groups. X-Remote-Group is suggested.")
	fs.StringSliceVar(&o.RequestHeaderExtraHeadersPrefix, "requestheader-extra-headers-prefix", o.RequestHeaderExtraHeadersPrefix, "List of request header prefixes to inspect. X-Remote-Extra- is suggested.")
	fs.StringSliceVar(&o.RequestHeaderUIDHeaders, "requestheader-uid-headers", o.RequestHeaderUIDHeaders, "List of request headers to inspect for UIDs. X-Remote-Uid is suggested.")
}

// validate checks the flags' combinations as kube-apiserver v1.37 does
// (RequestHeaderAuthenticationOptions.Validate: no empty entries, the
// standard X-Remote-Uid among --requestheader-uid-headers). Unlike kube,
// which silently runs without a proxy client certificate when given only
// one of its files, the certificate and key must come together.
func (o *AggregationOptions) validate() error {
	var errs []error
	if (o.ProxyClientCertFile == "") != (o.ProxyClientKeyFile == "") {
		errs = append(errs, errors.New("--proxy-client-cert-file and --proxy-client-key-file must be given together"))
	}
	for _, l := range []struct {
		flag   string
		values []string
	}{
		{"requestheader-username-headers", o.RequestHeaderUsernameHeaders},
		{"requestheader-group-headers", o.RequestHeaderGroupHeaders},
		{"requestheader-extra-headers-prefix", o.RequestHeaderExtraHeadersPrefix},
		{"requestheader-allowed-names", o.RequestHeaderAllowedNames},
		{"requestheader-uid-headers", o.RequestHeaderUIDHeaders},
	} {
		if slices.ContainsFunc(l.values, func(v string) bool { return strings.TrimSpace(v) == "" }) {
			errs = append(errs, fmt.Errorf("empty value in %q", l.flag))
		}
	}
	if len(o.RequestHeaderUIDHeaders) > 0 && !hasFold(o.RequestHeaderUIDHeaders, "X-Remote-Uid") {
		errs = append(errs, errors.New("--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work"))
	}
	return errors.Join(errs...)
}

func hasFold(values []string, want string) bool {
	return slices.ContainsFunc(values, func(v string) bool { return strings.EqualFold(v, want) })
}

// warnings are kube-apiserver's warnings about request headers extension
// apiservers will not look at.
func (o *AggregationOptions) warnings() []string {
	var out []string
	for _, h := range []struct {
		flag, standard string
		values         []string
		what           string
	}{
		{"requestheader-username-headers", "X-Remote-User", o.RequestHeaderUsernameHeaders, "header"},
		{"requestheader-group-headers", "X-Remote-Group", o.RequestHeaderGroupHeaders, "header"},
		{"requestheader-extra-headers-prefix", "X-Remote-Extra-", o.RequestHeaderExtraHeadersPrefix, "header prefix"},
	} {
		if len(h.values) > 0 && !hasFold(h.values, h.standard) {
			out = append(out, fmt.Sprintf("--%s is set without specifying the standard %s %s - API aggregation will not work", h.flag, h.standard, h.what))
		}
	}
	return out
}

// loadFrontProxyFiles reads the files the aggregation flags name, before
// anything starts: the proxy client key pair, the request-header CA
// bundle. Like kube-apiserver, it refuses a request-header CA that shares
// a certificate with the CA of client certificates (here the cluster CA,
// ca.crt in --cert-dir, when it exists already) unless
// --requestheader-allowed-names limits who may set the headers.
func (a *APIServer) loadFrontProxyFiles() error {
	o := &a.opts.Aggregation
	if o.ProxyClientCertFile != "" {
		c, err := tls.LoadX509KeyPair(o.ProxyClientCertFile, o.ProxyClientKeyFile)
		if err != nil {
			return fmt.Errorf("--proxy-client-cert-file: %w", err)
		}
		a.proxyCert.Store(&c)
	}
	if o.RequestHeaderClientCAFile == "" {
		return nil
	}
	data, err := os.ReadFile(o.RequestHeaderClientCAFile)
	if err != nil {
		return fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	cas, err := parseCerts(data)
	if err != nil {
		return fmt.Errorf("--requestheader-client-ca-file %s: %w", o.RequestHeaderClientCAFile, err)
	}
	if len(o.RequestHeaderAllowedNames) > 0 {
		return nil
	}
	clusterPEM, err := os.ReadFile(filepath.Join(a.opts.CertDir, pki.CACertFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a CA made later shares nothing with the bundle
	}
	if err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	cluster, err := parseCerts(clusterPEM)
	if err != nil {
		return fmt.Errorf("--cert-dir: %s: %w", pki.CACertFile, err)
	}
	for _, x := range cluster {
		for _, y := range cas {
			if x.Equal(y) {
				return errors.New("--requestheader-client-ca-file and the cluster CA (" + pki.CACertFile + " in --cert-dir) contain overlapping certificates; " +
					"--requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users")
			}
		}
	}
	return nil
}

// parseCerts reads a PEM bundle of at least one certificate.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return out, nil
}

// ensureFrontProxy makes the front-proxy PKI in the cert dir, unless the
// flags named a proxy client certificate, and defaults the request-header
// settings to it; it warns about settings extension apiservers will not
// accept.
func (a *APIServer) ensureFrontProxy() error {
	o := &a.opts.Aggregation
	defer func() {
		for _, w := range o.warnings() {
			a.log.Warn(w)
		}
		a.checkProxyCertTrusted()
	}()
	if o.ProxyClientCertFile != "" {
		return nil // loaded by loadFrontProxyFiles
	}
	b, certPEM, keyPEM, err := pki.EnsureFrontProxy(a.opts.CertDir)
	if err != nil {
		return fmt.Errorf("front-proxy certificates in %s: %w", a.opts.CertDir, err)
	}
	for _, w := range b.Written {
		a.log.Info("wrote certificate", "file", w)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("front-proxy client certificate: %w", err)
	}
	a.proxyCert.Store(&c)
	if o.RequestHeaderClientCAFile == "" {
		o.RequestHeaderClientCAFile = b.Path(pki.FrontProxyCACertFile)
		if len(o.RequestHeaderAllowedNames) == 0 {
			o.RequestHeaderAllowedNames = []string{pki.FrontProxyClientUser}
		}
	}
	defaults := []struct {
		dst *[]string
		v   string
	}{{&o.RequestHeaderUsernameHeaders, "X-Remote-User"}, {&o.RequestHeaderGroupHeaders, "X-Remote-Group"},
		{&o.RequestHeaderExtraHeadersPrefix, "X-Remote-Extra-"}, {&o.RequestHeaderUIDHeaders, "X-Remote-Uid"}}
	for _, d := range defaults {
		if len(*d.dst) == 0 {
			*d.dst = []string{d.v}
		}
	}
	return nil
}

// checkProxyCertTrusted warns when extension apiservers, told to trust
// --requestheader-client-ca-file (and --requestheader-allowed-names), will
// refuse the client certificate the aggregator presents: kube-apiserver
// runs so too, and aggregated APIs then fail their requests.
func (a *APIServer) checkProxyCertTrusted() {
	o := a.opts.Aggregation
	cert := a.proxyCert.Load()
	if o.RequestHeaderClientCAFile == "" || cert == nil || len(cert.Certificate) == 0 {
		return
	}
	data, err := os.ReadFile(o.RequestHeaderClientCAFile)
	if err != nil {
		return // reported when published
	}
	cas, err := parseCerts(data)
	leaf, lerr := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || lerr != nil {
		return
	}
	pool, intermediates := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	for _, raw := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(raw); err == nil {
			intermediates.AddCert(c)
		}
	}
	source := "--proxy-client-cert-file"
	if o.ProxyClientCertFile == "" {
		source = "the generated front-proxy client certificate (" + pki.FrontProxyClientName + ".crt in --cert-dir; no --proxy-client-cert-file)"
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		a.log.Warn(source+" is not signed by --requestheader-client-ca-file: extension apiservers will refuse the aggregator's requests", "err", err)
		return
	}
	if len(o.RequestHeaderAllowedNames) > 0 && !slices.Contains(o.RequestHeaderAllowedNames, leaf.Subject.CommonName) {
		a.log.Warn(source+" has a common name --requestheader-allowed-names does not list: extension apiservers will refuse the aggregator's requests",
			"commonName", leaf.Subject.CommonName, "allowed", o.RequestHeaderAllowedNames)
	}
}

// requestHeaderConfig is what extension apiservers read from
// extension-apiserver-authentication about request-header authentication,
// with kube-apiserver's keys (lists as JSON arrays); empty without a CA.
func (a *APIServer) requestHeaderConfig() (map[string]string, error) {
	o := a.opts.Aggregation
	if o.RequestHeaderClientCAFile == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(o.RequestHeaderClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	list := func(v []string) string {
		if v == nil {
			v = []string{}
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return map[string]string{
		"requestheader-client-ca-file":       string(ca),
		"requestheader-allowed-names":        list(o.RequestHeaderAllowedNames),
		"requestheader-username-headers":     list(o.RequestHeaderUsernameHeaders),
		"requestheader-group-headers":        list(o.RequestHeaderGroupHeaders),
		"requestheader-extra-headers-prefix": list(o.RequestHeaderExtraHeadersPrefix),
		"requestheader-uid-headers":          list(o.RequestHeaderUIDHeaders),
	}, nil
}

// newAggregator builds the aggregation layer on the stores.
func (a *APIServer) newAggregator() (*aggregator.Aggregator, error) {
	return aggregator.New(aggregator.Config{
		APIServices:     a.Store("apiregistration.k8s.io", "apiservices"),
		Services:        a.Store("", "services"),
		EndpointSlices:  a.Store("discovery.k8s.io", "endpointslices"),
		CRDs:            a.Store(api.APIExtensionsGroupName, "customresourcedefinitions"),
		ProxyClientCert: a.proxyCert.Load,
		Logger:          a.log,
	})
}

// startAggregator registers the Local APIServices of what this server
// serves and keeps every APIService's availability until ctx ends.
func (a *APIServer) startAggregator(ctx context.Context) error {
	var served []aggregator.GroupVersion
	for _, ri := range slices.Concat(storeInfos(a.stores), api.ReviewResources) {
		g := aggregator.GroupVersion{Group: ri.Group, Version: ri.Version}
		// kube registers the group versions of the servers it
		// delegates to (apiServicesToRegister), not the aggregator's
		// own apiregistration.k8s.io.
		if ri.Group == "apiregistration.k8s.io" {
			continue
		}
		if !slices.Contains(served, g) {
			served = append(served, g)
		}
	}
	if err := a.aggregator.RegisterLocal(ctx, served); err != nil {
		return err
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.aggregator.Run(ctx)
	}()
	return nil
}

func storeInfos(stores []*registry.Store) []api.ResourceInfo {
	out := make([]api.ResourceInfo, 0, len(stores))
	for _, s := range stores {
		out = append(out, s.Info)
	}
	return out
}
