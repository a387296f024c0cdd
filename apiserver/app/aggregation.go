package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

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

func (o *AggregationOptions) validate() error {
	if (o.ProxyClientCertFile == "") != (o.ProxyClientKeyFile == "") {
		return errors.New("--proxy-client-cert-file and --proxy-client-key-file must be given together")
	}
	if o.ProxyClientCertFile != "" && o.RequestHeaderClientCAFile == "" {
		return errors.New("--requestheader-client-ca-file is required with --proxy-client-cert-file: extension apiservers must be told which CA signed it")
	}
	return nil
}

// ensureFrontProxy loads the proxy client certificate the flags name, or
// makes the front-proxy PKI in the cert dir and defaults the
// request-header settings to it.
func (a *APIServer) ensureFrontProxy() error {
	o := &a.opts.Aggregation
	if o.ProxyClientCertFile != "" {
		c, err := tls.LoadX509KeyPair(o.ProxyClientCertFile, o.ProxyClientKeyFile)
		if err != nil {
			return fmt.Errorf("--proxy-client-cert-file: %w", err)
		}
		a.proxyCert.Store(&c)
		return nil
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
