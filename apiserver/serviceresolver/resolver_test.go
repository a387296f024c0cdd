package serviceresolver

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

type fakeLister struct {
	svcs   map[string]*api.Service
	slices map[string][]*api.EndpointSlice
}

func (f fakeLister) Service(ns, name string) (*api.Service, bool) {
	s, ok := f.svcs[ns+"/"+name]
	return s, ok
}

func (f fakeLister) EndpointSlices(ns, name string) []*api.EndpointSlice {
	return f.slices[ns+"/"+name]
}

func ptr[T any](v T) *T { return &v }

func TestResolveEndpoint(t *testing.T) {
	t.Parallel()
	l := fakeLister{
		svcs: map[string]*api.Service{
			"ns/hook": {Spec: api.ServiceSpec{ClusterIP: "10.0.0.5", Ports: []api.ServicePort{{Name: "https", Port: 443}}}},
			"ns/ext":  {Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "hook.example.com"}},
			"ns/idle": {Spec: api.ServiceSpec{ClusterIP: "10.0.0.6", Ports: []api.ServicePort{{Port: 443}}}},
		},
		slices: map[string][]*api.EndpointSlice{
			"ns/hook": {{
				Ports: []api.EndpointSlicePort{{Name: ptr("metrics"), Port: ptr(int32(9090))}, {Name: ptr("https"), Port: ptr(int32(8443))}},
				Endpoints: []api.Endpoint{
					{Addresses: []string{"10.1.0.1"}, Conditions: api.EndpointConditions{Ready: ptr(false)}},
					{Addresses: []string{"10.1.0.2"}, Conditions: api.EndpointConditions{Ready: ptr(true)}},
				},
			}},
			"ns/idle": {{Ports: []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(int32(8443))}},
				Endpoints: []api.Endpoint{{Addresses: []string{"10.1.0.3"}, Conditions: api.EndpointConditions{Ready: ptr(false)}}}}},
		},
	}
	tests := []struct {
		name, svc string
		port      int32
		routing   Routing
		want      string // host, or the error's text
	}{
		{"a ready endpoint at the target port", "hook", 443, Endpoints, "10.1.0.2:8443"},
		{"cluster IP", "hook", 443, ClusterIP, "10.0.0.5:443"},
		{"external name", "ext", 8443, Endpoints, "hook.example.com:8443"},
		{"no such service", "gone", 443, Endpoints, `services "gone" not found`},
		{"no such port", "hook", 80, Endpoints, `no service port 80 found for service "hook"`},
		{"no ready endpoint", "idle", 443, Endpoints, `no endpoints available for service "idle"`},
	}
	for _, tt := range tests {
		r := &Resolver{Lister: l, Routing: tt.routing}
		u, err := r.ResolveEndpoint("ns", tt.svc, tt.port)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = u.Host
			if u.Scheme != "https" {
				t.Errorf("%s: scheme %q", tt.name, u.Scheme)
			}
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
