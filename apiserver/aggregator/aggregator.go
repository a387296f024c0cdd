package aggregator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/discovery"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Config assembles an Aggregator.
type Config struct {
	// APIServices, Services and EndpointSlices are the apiserver's stores;
	// the aggregator reads their watch caches.
	APIServices, Services, EndpointSlices *registry.Store
	// CRDs, if set, is the store of CustomResourceDefinitions: each
	// group version a CRD serves gets its APIService (crd-autoregister).
	CRDs *registry.Store
	// ProxyClientCert returns the certificate presented to extension
	// apiservers (--proxy-client-cert-file); nil (or nil returned) presents
	// none. It is asked at each handshake, so it may be set after New.
	ProxyClientCert func() *tls.Certificate
	// CheckInterval is how often every APIService is checked again even
	// when nothing it depends on changed (default 30 s, kube's resync).
	CheckInterval time.Duration
	Logger        *slog.Logger
}

// Aggregator proxies the group/versions of remote APIServices and keeps
// their Available conditions.
type Aggregator struct {
	cfg Config
	log *slog.Logger

	mu         sync.Mutex
	transports map[string]cachedTransport // by APIService name
	// fetched is the discovery of each remote APIService's group
	// version, by APIService name (discovery.go).
	fetched map[string]discovery.APIVersionDiscovery
}

type cachedTransport struct {
	rv string // the APIService's resourceVersion it was built for
	rt *http.Transport
}

// New returns an Aggregator.
func New(cfg Config) (*Aggregator, error) {
	if cfg.APIServices == nil || cfg.Services == nil || cfg.EndpointSlices == nil {
		return nil, errors.New("aggregator: the apiservices, services and endpointslices stores are required")
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Aggregator{cfg: cfg, log: cfg.Logger.With("component", "aggregator"), transports: map[string]cachedTransport{},
		fetched: map[string]discovery.APIVersionDiscovery{}}, nil
}

// apiService returns the APIService of group/version from the watch cache.
func (a *Aggregator) apiService(group, version string) (*api.APIService, bool) {
	o, ok := a.cfg.APIServices.Cacher().Get(a.cfg.APIServices.Key("", version+"."+group))
	if !ok {
		return nil, false
	}
	s, ok := o.Decoded().(*api.APIService)
	return s, ok
}

// apiServices lists every APIService from the watch cache.
func (a *Aggregator) apiServices(ctx context.Context) ([]*api.APIService, error) {
	res, err := a.cfg.APIServices.List(ctx, "", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]*api.APIService, 0, len(res.Items))
	for _, it := range res.Items {
		out = append(out, it.Object.(*api.APIService))
	}
	return out, nil
}

// Handler returns the proxy of /apis/GROUP/VERSION/... when a remote
// APIService serves that group/version, nil when the apiserver does
// (local, or no APIService).
func (a *Aggregator) Handler(group, version string) http.Handler {
	s, ok := a.apiService(group, version)
	if !ok || s.Spec.Service == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.proxy(w, r, s) })
}

// proxy forwards one request to the APIService's server.
func (a *Aggregator) proxy(w http.ResponseWriter, r *http.Request, s *api.APIService) {
	if c := s.AvailableCondition(); c == nil || c.Status != api.ConditionTrue {
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	user, ok := request.UserFrom(r.Context())
	if !ok {
		http.Error(w, "missing user", http.StatusInternalServerError)
		return
	}
	host, err := a.resolve(s)
	if err != nil {
		a.log.Warn("resolving APIService endpoint", "apiservice", s.Name, "err", err)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	rt, err := a.transport(s)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	target := &url.URL{Scheme: "https", Host: host}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path, pr.Out.URL.RawPath = r.URL.Path, r.URL.RawPath
			pr.Out.Host = ""
			// The extension apiserver trusts the front-proxy certificate
			// for who the user is; what the client sent about it goes.
			pr.Out.Header.Del("Authorization")
			for k := range pr.Out.Header {
				if l := strings.ToLower(k); strings.HasPrefix(l, "x-remote-") || strings.HasPrefix(l, "impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
			setAuthProxyHeaders(pr.Out.Header, user)
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if r.Context().Err() == nil {
				a.log.Warn("proxying to APIService", "apiservice", s.Name, "err", err)
			}
			http.Error(w, fmt.Sprintf("Error trying to reach service: '%v'", err), http.StatusServiceUnavailable)
		},
	}
	rp.ServeHTTP(w, r)
}

// setAuthProxyHeaders writes the user as client-go's
// transport.SetAuthProxyHeaders does.
func setAuthProxyHeaders(h http.Header, u *request.User) {
	h.Set("X-Remote-User", u.Name)
	if u.UID != "" {
		h.Set("X-Remote-Uid", u.UID)
	}
	for _, g := range u.Groups {
		h.Add("X-Remote-Group", g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add("X-Remote-Extra-"+url.PathEscape(k), v)
		}
	}
}

// transport returns the TLS transport to an APIService's server: its CA
// bundle (or no check with insecureSkipTLSVerify), the service's DNS name
// as server name, the front-proxy client certificate.
func (a *Aggregator) transport(s *api.APIService) (*http.Transport, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.transports[s.Name]; ok && c.rv == s.ResourceVersion {
		return c.rt, nil
	}
	if old, ok := a.transports[s.Name]; ok {
		old.rt.CloseIdleConnections()
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: s.Spec.InsecureSkipTLSVerify}
	if !s.Spec.InsecureSkipTLSVerify {
		cfg.ServerName = s.Spec.Service.Name + "." + s.Spec.Service.Namespace + ".svc"
		if len(s.Spec.CABundle) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(s.Spec.CABundle) {
				return nil, fmt.Errorf("APIService %s: caBundle holds no PEM certificate", s.Name)
			}
			cfg.RootCAs = pool
		}
	}
	if get := a.cfg.ProxyClientCert; get != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if c := get(); c != nil {
				return c, nil
			}
			return &tls.Certificate{}, nil
		}
	}
	rt := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 25,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext, TLSHandshakeTimeout: 10 * time.Second}
	a.transports[s.Name] = cachedTransport{rv: s.ResourceVersion, rt: rt}
	return rt, nil
}

// errUnavailable is a resolution failure with kube-aggregator's condition
// reason and message.
type errUnavailable struct{ reason, message string }

func (e *errUnavailable) Error() string { return e.message }

// resolve picks the host:port of a ready endpoint of the APIService's
// service for its port (the external name of an ExternalName service).
func (a *Aggregator) resolve(s *api.APIService) (string, error) {
	ref := s.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	o, ok := a.cfg.Services.Cacher().Get(a.cfg.Services.Key(ref.Namespace, ref.Name))
	if !ok {
		return "", &errUnavailable{"ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)}
	}
	svc := o.Decoded().(*api.Service)
	if svc.Spec.Type == api.ServiceTypeExternalName {
		return net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port))), nil
	}
	portName, found := "", false
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			portName, found = p.Name, true
			break
		}
	}
	if !found {
		return "", &errUnavailable{"ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)}
	}
	ess, err := a.endpointSlices(ref.Namespace, ref.Name)
	if err != nil {
		return "", &errUnavailable{"EndpointsAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)}
	}
	if len(ess) == 0 {
		return "", &errUnavailable{"EndpointsNotFound", fmt.Sprintf("cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace)}
	}
	var hosts []string
	for _, es := range ess {
		var epPort *int32
		for _, p := range es.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == portName && p.Port != nil {
				epPort = p.Port
			}
		}
		if epPort == nil {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			hosts = append(hosts, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*epPort))))
		}
	}
	if len(hosts) == 0 {
		return "", &errUnavailable{"MissingEndpoints", fmt.Sprintf("endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName)}
	}
	return hosts[rand.IntN(len(hosts))], nil
}

// endpointSlices are the slices of service ns/name, from the watch cache.
func (a *Aggregator) endpointSlices(ns, name string) ([]*api.EndpointSlice, error) {
	res, err := a.cfg.EndpointSlices.List(context.Background(), ns, registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	var out []*api.EndpointSlice
	for _, it := range res.Items {
		es := it.Object.(*api.EndpointSlice)
		if es.Labels[api.LabelServiceName] == name {
			out = append(out, es)
		}
	}
	return out, nil
}
