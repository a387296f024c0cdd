package ingress

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/minik8s/minik8s/api"
)

// The path types of networking.k8s.io/v1 HTTPIngressPath.
const (
	PathTypeExact                  api.PathType = "Exact"
	PathTypePrefix                 api.PathType = "Prefix"
	PathTypeImplementationSpecific api.PathType = "ImplementationSpecific"
)

// Table is one immutable routing table: hosts and paths to backends, and
// server names to certificates. The controller builds a new one on every
// change and swaps it in whole.
type Table struct {
	exact    map[string]*hostRoutes
	wildcard map[string]*hostRoutes // "*.example.com" under "example.com"
	anyHost  *hostRoutes            // rules without a host
	// defaultBackend is the oldest owned Ingress' spec.defaultBackend: the
	// answer to a request no host rule takes.
	defaultBackend *Backend
	certs          certTable
	ingresses      int
}

// hostRoutes are the merged paths of one host, in match order.
type hostRoutes struct {
	paths []route
	// fallback takes the host's requests no path matches.
	fallback *Backend
}

type route struct {
	path  string // Exact: as written; Prefix: without trailing slashes
	exact bool
	to    *Backend
}

// Backend is a Service port of one Ingress resolved to endpoints.
type Backend struct {
	Namespace, Ingress, Service string
	// Port is the Service port as the Ingress names it (number or name).
	Port string
	// Endpoints are "host:port" addresses, sorted; empty answers 503.
	Endpoints []string
	next      atomic.Uint64
}

// Pick returns the next endpoint round-robin, "" when there is none.
func (b *Backend) Pick() string {
	if len(b.Endpoints) == 0 {
		return ""
	}
	return b.Endpoints[(b.next.Add(1)-1)%uint64(len(b.Endpoints))]
}

// Match returns the backend for a request to host (a Host header: a port
// and a trailing dot are ignored) and path, nil when nothing matches.
func (t *Table) Match(host, path string) *Backend {
	host = normalizeHost(host)
	if path == "" {
		path = "/"
	}
	if hr := t.hostRoutes(host); hr != nil {
		if b := hr.match(path); b != nil {
			return b
		}
		if hr != t.anyHost {
			return hr.fallback
		}
	}
	return t.defaultBackend
}

// hostRoutes selects the rules for host: exact, then wildcard, then
// host-less.
func (t *Table) hostRoutes(host string) *hostRoutes {
	if hr := t.exact[host]; hr != nil {
		return hr
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		if hr := t.wildcard[host[i+1:]]; hr != nil {
			return hr
		}
	}
	return t.anyHost
}

func (hr *hostRoutes) match(path string) *Backend {
	for _, r := range hr.paths {
		if r.exact && path == r.path || !r.exact && prefixMatch(r.path, path) {
			return r.to
		}
	}
	return nil
}

// prefixMatch reports whether the request path p is under the Prefix rule
// prefix (trailing slashes already trimmed) element by element.
func prefixMatch(prefix, p string) bool {
	if prefix == "" {
		return true
	}
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	return len(p) == len(prefix) || p[len(prefix)] == '/'
}

// normalizeHost drops the port and a trailing dot and lowers the case.
func normalizeHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// Certificate returns the certificate to present for a ClientHello's
// server name, nil when the table has none for it.
func (t *Table) Certificate(serverName string) *tls.Certificate {
	return t.certs.lookup(normalizeHost(serverName))
}

type certTable struct {
	exact    map[string]*tls.Certificate
	wildcard map[string]*tls.Certificate
	// byName are the certificates of TLS entries without hosts, matched
	// by the names they are valid for.
	byName []*tls.Certificate
}

func (c *certTable) lookup(name string) *tls.Certificate {
	if name == "" {
		return nil
	}
	if crt := c.exact[name]; crt != nil {
		return crt
	}
	if i := strings.IndexByte(name, '.'); i > 0 {
		if crt := c.wildcard[name[i+1:]]; crt != nil {
			return crt
		}
	}
	for _, crt := range c.byName {
		if crt.Leaf != nil && crt.Leaf.VerifyHostname(name) == nil {
			return crt
		}
	}
	return nil
}

// Sources are what Build resolves backends and certificates from.
type Sources interface {
	Service(namespace, name string) *api.Service
	// EndpointSlices returns the slices of a Service.
	EndpointSlices(namespace, service string) []*api.EndpointSlice
	// Certificate returns the key pair of a kubernetes.io/tls Secret.
	Certificate(namespace, name string) (*tls.Certificate, error)
}

// Build makes the table of the owned Ingresses. Ingresses are taken oldest
// first (then by namespace and name), so where two claim the same host and
// path, or the default backend, the oldest wins, as with ingress-nginx.
func Build(ingresses []*api.Ingress, src Sources, log *slog.Logger) *Table {
	if log == nil {
		log = slog.Default()
	}
	ings := slices.Clone(ingresses)
	slices.SortStableFunc(ings, func(a, b *api.Ingress) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	t := &Table{exact: map[string]*hostRoutes{}, wildcard: map[string]*hostRoutes{}, anyHost: &hostRoutes{}, ingresses: len(ings),
		certs: certTable{exact: map[string]*tls.Certificate{}, wildcard: map[string]*tls.Certificate{}}}
	for _, ing := range ings {
		var def *Backend
		if ing.Spec.DefaultBackend != nil {
			def = resolve(ing, *ing.Spec.DefaultBackend, src, log)
			if t.defaultBackend == nil {
				t.defaultBackend = def
			}
		}
		for _, rule := range ing.Spec.Rules {
			hr := t.routesFor(rule.Host)
			if hr.fallback == nil && hr != t.anyHost {
				hr.fallback = def
			}
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				r := route{path: p.Path, to: resolve(ing, p.Backend, src, log)}
				if p.PathType != nil && *p.PathType == PathTypeExact {
					r.exact = true
				} else {
					// Prefix, and ImplementationSpecific matched as Prefix.
					r.path = strings.TrimRight(p.Path, "/")
				}
				hr.paths = append(hr.paths, r)
			}
		}
		t.addCerts(ing, src, log)
	}
	for _, hr := range t.all() {
		// Longest first, Exact before Prefix at equal length; stable, so the
		// oldest Ingress' route is tried first among equals.
		slices.SortStableFunc(hr.paths, func(a, b route) int {
			if len(a.path) != len(b.path) {
				return len(b.path) - len(a.path)
			}
			if a.exact != b.exact {
				if a.exact {
					return -1
				}
				return 1
			}
			return 0
		})
	}
	return t
}

func (t *Table) all() []*hostRoutes {
	out := []*hostRoutes{t.anyHost}
	for _, m := range []map[string]*hostRoutes{t.exact, t.wildcard} {
		for _, hr := range m {
			out = append(out, hr)
		}
	}
	return out
}

func (t *Table) routesFor(host string) *hostRoutes {
	host = strings.ToLower(host)
	m := t.exact
	switch {
	case host == "":
		return t.anyHost
	case strings.HasPrefix(host, "*."):
		m, host = t.wildcard, host[2:]
	}
	hr := m[host]
	if hr == nil {
		hr = &hostRoutes{}
		m[host] = hr
	}
	return hr
}

func (t *Table) addCerts(ing *api.Ingress, src Sources, log *slog.Logger) {
	for _, entry := range ing.Spec.TLS {
		if entry.SecretName == "" {
			continue
		}
		crt, err := src.Certificate(ing.Namespace, entry.SecretName)
		if err != nil {
			log.Warn("ingress TLS secret unusable; its hosts get the default certificate", "ingress", ing.Namespace+"/"+ing.Name,
				"secret", entry.SecretName, "err", err)
			continue
		}
		if len(entry.Hosts) == 0 {
			t.certs.byName = append(t.certs.byName, crt)
			continue
		}
		for _, h := range entry.Hosts {
			h = strings.ToLower(h)
			m := t.certs.exact
			if strings.HasPrefix(h, "*.") {
				m, h = t.certs.wildcard, h[2:]
			}
			if _, taken := m[h]; !taken {
				m[h] = crt
			}
		}
	}
}

// resolve turns an IngressBackend of ing into endpoints.
func resolve(ing *api.Ingress, ib api.IngressBackend, src Sources, log *slog.Logger) *Backend {
	b := &Backend{Namespace: ing.Namespace, Ingress: ing.Name}
	if ib.Service == nil {
		log.Warn("ingress backend without a service is not supported", "ingress", ing.Namespace+"/"+ing.Name)
		return b
	}
	b.Service = ib.Service.Name
	b.Port = ib.Service.Port.Name
	if b.Port == "" {
		b.Port = strconv.Itoa(int(ib.Service.Port.Number))
	}
	svc := src.Service(ing.Namespace, ib.Service.Name)
	if svc == nil {
		return b
	}
	var sp *api.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if ib.Service.Port.Name != "" && p.Name == ib.Service.Port.Name ||
			ib.Service.Port.Name == "" && p.Port == ib.Service.Port.Number {
			sp = p
			break
		}
	}
	if svc.Spec.Type == api.ServiceTypeExternalName {
		port := ib.Service.Port.Number
		if sp != nil {
			port = sp.Port
		}
		if svc.Spec.ExternalName != "" && port != 0 {
			b.Endpoints = []string{net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}
		}
		return b
	}
	if sp == nil || sp.Protocol != "" && sp.Protocol != api.ProtocolTCP {
		return b
	}
	seen := map[string]bool{}
	for _, sl := range src.EndpointSlices(ing.Namespace, svc.Name) {
		if sl.AddressType == api.AddressTypeFQDN {
			continue
		}
		var port int32
		for _, p := range sl.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == sp.Name && p.Port != nil && (p.Protocol == nil || *p.Protocol == api.ProtocolTCP) {
				port = *p.Port
				break
			}
		}
		if port == 0 {
			continue
		}
		for _, e := range sl.Endpoints {
			// An unknown readiness counts as ready (EndpointConditions).
			if len(e.Addresses) == 0 || e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			addr := net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port)))
			if !seen[addr] {
				seen[addr] = true
				b.Endpoints = append(b.Endpoints, addr)
			}
		}
	}
	slices.Sort(b.Endpoints)
	return b
}

// parseKeyPair reads a kubernetes.io/tls Secret's key pair.
func parseKeyPair(sec *api.Secret) (*tls.Certificate, error) {
	if sec.Type != api.SecretTypeTLS {
		return nil, fmt.Errorf("secret type is %q, not %q", sec.Type, api.SecretTypeTLS)
	}
	crt, err := tls.X509KeyPair(sec.Data[api.TLSCertKey], sec.Data[api.TLSPrivateKeyKey])
	if err != nil {
		return nil, err
	}
	if crt.Leaf == nil {
		if crt.Leaf, err = x509.ParseCertificate(crt.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &crt, nil
}
