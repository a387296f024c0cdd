package ingress

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// fakeSources serves Services named after their backends, each with port 80
// ("http") and one ready endpoint "<name>:80" (the name stands for an IP).
type fakeSources struct {
	noEndpoints map[string]bool
	certs       map[string]*tls.Certificate
}

func (f fakeSources) Service(ns, name string) *api.Service {
	if name == "missing" {
		return nil
	}
	return &api.Service{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Name: "http", Port: 80}}}}
}

func (f fakeSources) EndpointSlices(ns, svc string) []*api.EndpointSlice {
	if f.noEndpoints[svc] {
		return nil
	}
	port, name := int32(8080), "http"
	return []*api.EndpointSlice{{AddressType: api.AddressTypeIPv4, Ports: []api.EndpointSlicePort{{Name: &name, Port: &port}},
		Endpoints: []api.Endpoint{{Addresses: []string{svc}}}}}
}

func (f fakeSources) Certificate(ns, name string) (*tls.Certificate, error) {
	if c := f.certs[name]; c != nil {
		return c, nil
	}
	return nil, errors.New("no such secret")
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func pt(s string) *api.PathType { p := api.PathType(s); return &p }

// ing builds an Ingress; paths are "TYPE PATH SERVICE" under host.
func ing(name string, age int, host string, paths ...string) *api.Ingress {
	var hp []api.HTTPIngressPath
	for _, p := range paths {
		f := strings.Fields(p)
		hp = append(hp, api.HTTPIngressPath{Path: f[1], PathType: pt(f[0]), Backend: svcBackend(f[2])})
	}
	return &api.Ingress{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: api.NewTime(time.Unix(int64(1000+age), 0))},
		Spec: api.IngressSpec{Rules: []api.IngressRule{{Host: host, IngressRuleValue: api.IngressRuleValue{HTTP: &api.HTTPIngressRuleValue{Paths: hp}}}}}}
}

func svcBackend(name string) api.IngressBackend {
	return api.IngressBackend{Service: &api.IngressServiceBackend{Name: name, Port: api.ServiceBackendPort{Number: 80}}}
}

func serviceOf(b *Backend) string {
	if b == nil {
		return "404"
	}
	return b.Service
}

// TestPathMatchingExamples is the table of the Kubernetes documentation's
// Ingress path-matching examples: a rule set, a request path, and which
// rule (named by its backend) takes it; "404" is no match, which would go
// to the default backend.
func TestPathMatchingExamples(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		req   string
		want  string
	}{
		{"Prefix / matches all paths", []string{"Prefix / root"}, "/anything/at/all", "root"},
		{"Exact /foo matches /foo", []string{"Exact /foo foo"}, "/foo", "foo"},
		{"Exact /foo does not match /bar", []string{"Exact /foo foo"}, "/bar", "404"},
		{"Exact /foo does not match /foo/", []string{"Exact /foo foo"}, "/foo/", "404"},
		{"Exact /foo/ does not match /foo", []string{"Exact /foo/ foo"}, "/foo", "404"},
		{"Prefix /foo matches /foo", []string{"Prefix /foo foo"}, "/foo", "foo"},
		{"Prefix /foo matches /foo/", []string{"Prefix /foo foo"}, "/foo/", "foo"},
		{"Prefix /foo/ matches /foo", []string{"Prefix /foo/ foo"}, "/foo", "foo"},
		{"Prefix /foo/ matches /foo/", []string{"Prefix /foo/ foo"}, "/foo/", "foo"},
		{"Prefix /aaa/bb does not match /aaa/bbb", []string{"Prefix /aaa/bb bb"}, "/aaa/bbb", "404"},
		{"Prefix /aaa/bbb matches /aaa/bbb", []string{"Prefix /aaa/bbb bbb"}, "/aaa/bbb", "bbb"},
		{"Prefix /aaa/bbb/ matches /aaa/bbb (trailing slash of the rule ignored)", []string{"Prefix /aaa/bbb/ bbb"}, "/aaa/bbb", "bbb"},
		{"Prefix /aaa/bbb matches /aaa/bbb/ (trailing slash of the request)", []string{"Prefix /aaa/bbb bbb"}, "/aaa/bbb/", "bbb"},
		{"Prefix /aaa/bbb matches /aaa/bbb/ccc (subpath)", []string{"Prefix /aaa/bbb bbb"}, "/aaa/bbb/ccc", "bbb"},
		{"Prefix /aaa/bbb does not match /aaa/bbbxyz (string prefix)", []string{"Prefix /aaa/bbb bbb"}, "/aaa/bbbxyz", "404"},
		{"Prefix /, /aaa: /aaa/ccc takes /aaa", []string{"Prefix / root", "Prefix /aaa aaa"}, "/aaa/ccc", "aaa"},
		{"Prefix /, /aaa, /aaa/bbb: /aaa/bbb takes /aaa/bbb", []string{"Prefix / root", "Prefix /aaa aaa", "Prefix /aaa/bbb bbb"}, "/aaa/bbb", "bbb"},
		{"Prefix /, /aaa, /aaa/bbb: /ccc takes /", []string{"Prefix / root", "Prefix /aaa aaa", "Prefix /aaa/bbb bbb"}, "/ccc", "root"},
		{"Prefix /aaa: /ccc goes to the default backend", []string{"Prefix /aaa aaa"}, "/ccc", "404"},
		{"Mixed /foo Prefix and Exact: /foo prefers Exact", []string{"Prefix /foo prefix", "Exact /foo exact"}, "/foo", "exact"},
		{"Mixed /foo Prefix and Exact: /foo/bar takes Prefix", []string{"Prefix /foo prefix", "Exact /foo exact"}, "/foo/bar", "prefix"},
		// Beyond the documentation's table.
		{"longest wins over order", []string{"Prefix /a a", "Prefix /a/b/c abc", "Exact /a/b ab"}, "/a/b/c/d", "abc"},
		{"Exact longer than Prefix wins", []string{"Prefix /a a", "Exact /a/b ab"}, "/a/b", "ab"},
		{"Exact is case-sensitive", []string{"Exact /Foo foo"}, "/foo", "404"},
		{"ImplementationSpecific is matched as Prefix", []string{"ImplementationSpecific /api api"}, "/api/v1", "api"},
		{"ImplementationSpecific is element-wise", []string{"ImplementationSpecific /api api"}, "/apis", "404"},
		{"empty request path is /", []string{"Exact / root"}, "", "root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := Build([]*api.Ingress{ing("i", 0, "", tt.paths...)}, fakeSources{}, quiet)
			if got := serviceOf(tab.Match("example.com", tt.req)); got != tt.want {
				t.Errorf("%v, request %q: got %s, want %s", tt.paths, tt.req, got, tt.want)
			}
		})
	}
}

// TestHostMatching covers exact and wildcard hosts (one label only), the
// precedence exact > wildcard > host-less, per-Ingress default backends,
// the catch-all default backend and the merge of several Ingresses.
func TestHostMatching(t *testing.T) {
	withDefault := func(i *api.Ingress, svc string) *api.Ingress {
		b := svcBackend(svc)
		i.Spec.DefaultBackend = &b
		return i
	}
	ings := []*api.Ingress{
		ing("exact", 1, "foo.bar.com", "Prefix /app exact-app"),
		ing("wild", 2, "*.bar.com", "Prefix / wild"),
		ing("any", 3, "", "Prefix /shop any-shop"),
		withDefault(ing("hosted", 5, "hosted.example", "Exact /x hosted-x"), "hosted-default"),
		withDefault(ing("catchall", 4, "other.example", "Exact /y other-y"), "catchall-default"),
		withDefault(ing("younger", 6, "", "Exact /z younger-z"), "younger-default"),
		ing("merge", 7, "foo.bar.com", "Exact /app merged-exact", "Prefix /app old-dup"),
		ing("dup", 0, "dup.example", "Prefix / oldest"),
		ing("dup2", 8, "dup.example", "Prefix / newest"),
	}
	tab := Build(ings, fakeSources{}, quiet)
	tests := []struct{ host, path, want string }{
		{"foo.bar.com", "/app/x", "exact-app"},
		{"FOO.bar.com:8080", "/app", "merged-exact"}, // port and case ignored; merged Exact beats Prefix
		{"foo.bar.com.", "/app/y", "exact-app"},
		{"foo.bar.com", "/other", "404"}, // the exact host has its rules: no fallthrough to the wildcard
		{"baz.bar.com", "/anything", "wild"},
		{"a.baz.bar.com", "/anything", "any-shop-or-default"},
		{"bar.com", "/", "catchall-default"},
		{"nohost.example", "/shop/cart", "any-shop"},
		{"nohost.example", "/z", "younger-z"},
		{"nohost.example", "/nothing", "catchall-default"}, // the oldest Ingress' defaultBackend, not the younger's
		{"hosted.example", "/x", "hosted-x"},
		{"hosted.example", "/y", "hosted-default"}, // its own Ingress' defaultBackend
		{"other.example", "/nothing", "catchall-default"},
		{"dup.example", "/", "oldest"},
		{"[::1]:80", "/shop", "any-shop"},
	}
	for _, tt := range tests {
		want := tt.want
		if want == "any-shop-or-default" { // one label only: *.bar.com does not take a.baz.bar.com
			want = "catchall-default"
		}
		if got := serviceOf(tab.Match(tt.host, tt.path)); got != want {
			t.Errorf("%s%s: got %s, want %s", tt.host, tt.path, got, want)
		}
	}
	// Without any default backend nothing left matches: 404.
	tab = Build([]*api.Ingress{ing("exact", 1, "foo.bar.com", "Prefix /app exact-app")}, fakeSources{}, quiet)
	if b := tab.Match("nohost.example", "/"); b != nil {
		t.Errorf("no default backend: got %s, want none", b.Service)
	}
}

func TestBackendResolution(t *testing.T) {
	i := ing("i", 0, "", "Prefix /a a", "Prefix /gone missing", "Prefix /empty empty")
	named := api.IngressBackend{Service: &api.IngressServiceBackend{Name: "named", Port: api.ServiceBackendPort{Name: "http"}}}
	wrongPort := api.IngressBackend{Service: &api.IngressServiceBackend{Name: "wrong", Port: api.ServiceBackendPort{Number: 81}}}
	i.Spec.Rules[0].HTTP.Paths = append(i.Spec.Rules[0].HTTP.Paths,
		api.HTTPIngressPath{Path: "/named", PathType: pt("Prefix"), Backend: named},
		api.HTTPIngressPath{Path: "/wrong", PathType: pt("Prefix"), Backend: wrongPort})
	tab := Build([]*api.Ingress{i}, fakeSources{noEndpoints: map[string]bool{"empty": true}}, quiet)
	for path, want := range map[string]string{"/a": "a:8080", "/named": "named:8080", "/gone": "", "/empty": "", "/wrong": ""} {
		b := tab.Match("h", path)
		if b == nil {
			t.Fatalf("%s: no backend", path)
		}
		if got := b.Pick(); got != want {
			t.Errorf("%s: endpoint %q, want %q", path, got, want)
		}
	}
}

func TestResolveReadyEndpointsRoundRobin(t *testing.T) {
	yes, no := true, false
	name, port, udp := "web", int32(8080), api.Protocol("UDP")
	other := int32(9090)
	src := &sliceSources{svc: &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "s"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Name: "web", Port: 80}}}},
		slices: []*api.EndpointSlice{
			{AddressType: api.AddressTypeIPv4, Ports: []api.EndpointSlicePort{{Name: &name, Port: &port}}, Endpoints: []api.Endpoint{
				{Addresses: []string{"10.0.0.2"}, Conditions: api.EndpointConditions{Ready: &yes}},
				{Addresses: []string{"10.0.0.3"}, Conditions: api.EndpointConditions{Ready: &no}},
				{Addresses: []string{"10.0.0.1"}}, // unknown readiness counts as ready
			}},
			{AddressType: api.AddressTypeIPv6, Ports: []api.EndpointSlicePort{{Name: &name, Port: &port}}, Endpoints: []api.Endpoint{
				{Addresses: []string{"fd00::1"}}, {Addresses: []string{"10.0.0.2"}}, // a duplicate is one endpoint
			}},
			{AddressType: api.AddressTypeIPv4, Ports: []api.EndpointSlicePort{{Name: &name, Port: &other, Protocol: &udp}}, Endpoints: []api.Endpoint{
				{Addresses: []string{"10.9.9.9"}}, // UDP port: not ours
			}},
		}}
	b := resolve(ing("i", 0, ""), api.IngressBackend{Service: &api.IngressServiceBackend{Name: "s", Port: api.ServiceBackendPort{Number: 80}}}, src, quiet)
	want := []string{"10.0.0.1:8080", "10.0.0.2:8080", "[fd00::1]:8080"}
	if strings.Join(b.Endpoints, ",") != strings.Join(want, ",") {
		t.Fatalf("endpoints %v, want %v", b.Endpoints, want)
	}
	var got []string
	for range 6 {
		got = append(got, b.Pick())
	}
	if strings.Join(got, ",") != strings.Join(append(want, want...), ",") {
		t.Errorf("picks %v, want round-robin over %v", got, want)
	}
	// An ExternalName Service proxies to its name.
	src.svc.Spec.Type, src.svc.Spec.ExternalName = api.ServiceTypeExternalName, "example.org"
	b = resolve(ing("i", 0, ""), api.IngressBackend{Service: &api.IngressServiceBackend{Name: "s", Port: api.ServiceBackendPort{Name: "web"}}}, src, quiet)
	if got := b.Pick(); got != "example.org:80" {
		t.Errorf("ExternalName: %q, want example.org:80", got)
	}
}

type sliceSources struct {
	svc    *api.Service
	slices []*api.EndpointSlice
}

func (s *sliceSources) Service(_, _ string) *api.Service                { return s.svc }
func (s *sliceSources) EndpointSlices(_, _ string) []*api.EndpointSlice { return s.slices }
func (s *sliceSources) Certificate(_, _ string) (*tls.Certificate, error) {
	return nil, errors.New("none")
}

func TestCertificateBySNI(t *testing.T) {
	mk := func() *tls.Certificate {
		c, err := SelfSignedCertificate()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	exact, wild, byName := mk(), mk(), mk()
	byName.Leaf.DNSNames = []string{"named.example"}
	i := ing("i", 0, "a.example", "Prefix / a")
	i.Spec.TLS = []api.IngressTLS{{Hosts: []string{"a.example"}, SecretName: "exact"}, {Hosts: []string{"*.wild.example"}, SecretName: "wild"},
		{SecretName: "byname"}, {Hosts: []string{"broken.example"}, SecretName: "absent"}}
	tab := Build([]*api.Ingress{i}, fakeSources{certs: map[string]*tls.Certificate{"exact": exact, "wild": wild, "byname": byName}}, quiet)
	for _, tt := range []struct {
		name string
		want *tls.Certificate
	}{{"a.example", exact}, {"A.Example", exact}, {"x.wild.example", wild}, {"y.x.wild.example", nil}, {"wild.example", nil},
		{"named.example", byName}, {"broken.example", nil}, {"", nil}} {
		if got := tab.Certificate(tt.name); got != tt.want {
			t.Errorf("%q: wrong certificate (got %p, want %p)", tt.name, got, tt.want)
		}
	}
}

func TestOwns(t *testing.T) {
	class := Class{Controller: DefaultControllerClass, Name: "minik8s"}
	ic := func(name, controller string, def bool, age int) *api.IngressClass {
		c := &api.IngressClass{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: api.NewTime(time.Unix(int64(age), 0))},
			Spec: api.IngressClassSpec{Controller: controller}}
		if def {
			c.Annotations = map[string]string{AnnotationIsDefaultIngressClass: "true"}
		}
		return c
	}
	ours, other := ic("minik8s", DefaultControllerClass, false, 1), ic("nginx", "k8s.io/ingress-nginx", false, 1)
	alsoOurs := ic("second", DefaultControllerClass, false, 1)
	name := func(s string) *string { return &s }
	withClass := func(n *string, ann string) *api.Ingress {
		i := &api.Ingress{Spec: api.IngressSpec{IngressClassName: n}}
		if ann != "" {
			i.Annotations = map[string]string{AnnotationIngressClass: ann}
		}
		return i
	}
	tests := []struct {
		name    string
		ing     *api.Ingress
		classes []*api.IngressClass
		want    bool
	}{
		{"class of ours", withClass(name("minik8s"), ""), []*api.IngressClass{ours, other}, true},
		{"another class of our controller", withClass(name("second"), ""), []*api.IngressClass{ours, alsoOurs}, true},
		{"class of another controller", withClass(name("nginx"), ""), []*api.IngressClass{ours, other}, false},
		{"class that does not exist", withClass(name("ghost"), ""), []*api.IngressClass{ours}, false},
		{"no class, no default", withClass(nil, ""), []*api.IngressClass{ours, other}, false},
		{"no class, ours default", withClass(nil, ""), []*api.IngressClass{ic("minik8s", DefaultControllerClass, true, 1), other}, true},
		{"no class, other default", withClass(nil, ""), []*api.IngressClass{ours, ic("nginx", "k8s.io/ingress-nginx", true, 1)}, false},
		{"no class, newest default wins (ours)", withClass(nil, ""), []*api.IngressClass{ic("minik8s", DefaultControllerClass, true, 5), ic("nginx", "k8s.io/ingress-nginx", true, 2)}, true},
		{"no class, newest default wins (other)", withClass(nil, ""), []*api.IngressClass{ic("minik8s", DefaultControllerClass, true, 2), ic("nginx", "k8s.io/ingress-nginx", true, 5)}, false},
		{"annotation names our class name", withClass(nil, "minik8s"), nil, true},
		{"annotation names a class of ours", withClass(nil, "second"), []*api.IngressClass{alsoOurs}, true},
		{"annotation names another class, ours default", withClass(nil, "nginx"), []*api.IngressClass{ic("minik8s", DefaultControllerClass, true, 1), other}, false},
	}
	for _, tt := range tests {
		if got := class.Owns(tt.ing, tt.classes); got != tt.want {
			t.Errorf("%s: Owns = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLoadBalancerIngress(t *testing.T) {
	got := LoadBalancerIngress([]string{"192.0.2.10", "lb.example.com", "2001:db8::1"})
	want := []api.IngressLoadBalancerIngress{{IP: "192.0.2.10"}, {Hostname: "lb.example.com"}, {IP: "2001:db8::1"}}
	if !sameLoadBalancer(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if sameLoadBalancer(got, want[:2]) || sameLoadBalancer(nil, want) || !sameLoadBalancer(nil, []api.IngressLoadBalancerIngress{}) {
		t.Error("sameLoadBalancer compares wrongly")
	}
}
