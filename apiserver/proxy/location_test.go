package proxy

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

func TestSplitSchemeNamePort(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id                 string
		scheme, name, port string
		valid              bool
	}{
		{id: "web", name: "web", valid: true},
		{id: "web:8080", name: "web", port: "8080", valid: true},
		{id: "web:http", name: "web", port: "http", valid: true},
		{id: "https:web:443", scheme: "https", name: "web", port: "443", valid: true},
		{id: "http:web:", scheme: "http", name: "web", valid: true},
		{id: "ftp:web:21"},
		{id: ":80"},
		{id: "a:b:c:d"},
		{id: ""},
	}
	for _, c := range cases {
		scheme, name, port, valid := SplitSchemeNamePort(c.id)
		if scheme != c.scheme || name != c.name || port != c.port || valid != c.valid {
			t.Errorf("SplitSchemeNamePort(%q) = %q %q %q %v, want %q %q %q %v", c.id, scheme, name, port, valid, c.scheme, c.name, c.port, c.valid)
		}
	}
}

func TestSubPathAndJoin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path string
		want string
	}{
		{"/api/v1/namespaces/ns/pods/web/proxy", ""},
		{"/api/v1/namespaces/ns/pods/web/proxy/", "/"},
		{"/api/v1/namespaces/ns/pods/web/proxy/a/b", "/a/b"},
		{"/api/v1/namespaces/ns/pods/web/proxy/a/b/", "/a/b/"},
	}
	for _, c := range cases {
		segs := strings.Split(strings.Trim(c.path, "/"), "/")[4:] // after api/v1/namespaces/ns
		if got := SubPath(segs, c.path); got != c.want {
			t.Errorf("SubPath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	joins := []struct {
		elems []string
		want  string
	}{
		{[]string{"", ""}, ""},
		{[]string{"", "/"}, "/"},
		{[]string{"", "/a/b/"}, "/a/b/"},
		{[]string{"/base", "x"}, "/base/x"},
		{[]string{"", "/a/../../etc/"}, "/etc/"},
		{[]string{"/a/", ""}, "/a/"},
	}
	for _, c := range joins {
		if got := JoinPreservingTrailingSlash(c.elems...); got != c.want {
			t.Errorf("JoinPreservingTrailingSlash(%q) = %q, want %q", c.elems, got, c.want)
		}
	}
}

func podWith(ip string, ports ...int32) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns"}}
	c := api.Container{Name: "app"}
	for _, port := range ports {
		c.Ports = append(c.Ports, api.ContainerPort{ContainerPort: port})
	}
	p.Spec.Containers = []api.Container{{Name: "sidecar"}, c}
	if ip != "" {
		p.Status.PodIP = ip
		p.Status.PodIPs = []api.PodIP{{IP: ip}}
	}
	return p
}

func TestPodLocation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		pod          *api.Pod
		scheme, port string
		want         string
		wantErr      string
	}{
		{name: "first declared port", pod: podWith("10.1.2.3", 8080, 9090), want: "//10.1.2.3:8080"},
		{name: "port asked for", pod: podWith("10.1.2.3", 8080), port: "1080", scheme: "https", want: "https://10.1.2.3:1080"},
		{name: "no port at all", pod: podWith("10.1.2.3"), want: "//10.1.2.3"},
		{name: "IPv6 without port", pod: podWith("fd00::5"), want: "//[fd00::5]"},
		{name: "IPv6 with port", pod: podWith("fd00::5", 80), want: "//[fd00::5]:80"},
		{name: "no IP", pod: podWith("", 80), wantErr: "address not allowed"},
		{name: "loopback", pod: podWith("127.0.0.1", 80), wantErr: "address not allowed"},
		{name: "link-local", pod: podWith("169.254.169.254", 80), wantErr: "address not allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := PodLocation(c.pod, c.scheme, c.port)
			if c.wantErr != "" {
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.Status().Code != http.StatusBadRequest || se.Error() != c.wantErr {
					t.Fatalf("got %v, want 400 %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != c.want {
				t.Errorf("got %s, want %s", u, c.want)
			}
		})
	}
}

type fakeSource struct {
	svcs   map[string]*api.Service
	slices []*api.EndpointSlice
	pods   map[string]*api.Pod
}

func (f fakeSource) Service(_ context.Context, _, name string) (*api.Service, error) {
	if s, ok := f.svcs[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "services"}, name)
}

func (f fakeSource) EndpointSlices(context.Context, string, string) ([]*api.EndpointSlice, error) {
	return f.slices, nil
}

func (f fakeSource) Pod(_ context.Context, _, name string) (*api.Pod, error) {
	if p, ok := f.pods[name]; ok {
		return p, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "pods"}, name)
}

func ptr[T any](v T) *T { return &v }

func slice(portName string, port int32, eps ...api.Endpoint) *api.EndpointSlice {
	return &api.EndpointSlice{AddressType: api.AddressType("IPv4"), Endpoints: eps,
		Ports: []api.EndpointSlicePort{{Name: ptr(portName), Port: ptr(port)}}}
}

func endpoint(ip, pod string, ready *bool) api.Endpoint {
	ep := api.Endpoint{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: ready}}
	if pod != "" {
		ep.TargetRef = &api.ObjectReference{Kind: "Pod", Namespace: "ns", Name: pod}
	}
	return ep
}

func TestServiceLocation(t *testing.T) {
	t.Parallel()
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: api.ServiceSpec{
		Ports: []api.ServicePort{{Name: "http", Port: 80}, {Name: "tls", Port: 443}}}}
	pods := map[string]*api.Pod{"a": podWith("10.0.0.1"), "b": podWith("10.0.0.2")}
	cases := []struct {
		name    string
		id      string
		slices  []*api.EndpointSlice
		want    string
		wantErr string
		code    int32
	}{
		{name: "port by name", id: "web:http", slices: []*api.EndpointSlice{slice("http", 8080, endpoint("10.0.0.1", "a", nil))}, want: "//10.0.0.1:8080"},
		{name: "port by number is the port's name", id: "https:web:443",
			slices: []*api.EndpointSlice{slice("http", 8080, endpoint("10.0.0.1", "a", nil)), slice("tls", 8443, endpoint("10.0.0.2", "b", ptr(true)))},
			want:   "https://10.0.0.2:8443"},
		{name: "no such port number", id: "web:81", wantErr: `no service port 81 found for service "web"`, code: 503},
		{name: "no such service", id: "ghost:81", wantErr: `services "ghost" not found`, code: 404},
		{name: "no slices", id: "web", wantErr: `no endpoints available for service "web"`, code: 503},
		{name: "unready endpoint", id: "web:http", slices: []*api.EndpointSlice{slice("http", 8080, endpoint("10.0.0.1", "a", ptr(false)))},
			wantErr: `no endpoints available for service "web"`, code: 503},
		{name: "endpoint that is no pod", id: "web:http", slices: []*api.EndpointSlice{slice("http", 8080, endpoint("10.0.0.1", "", nil))},
			wantErr: `no endpoints available for service "web"`, code: 503},
		{name: "endpoint whose pod has another IP", id: "web:http", slices: []*api.EndpointSlice{slice("http", 8080, endpoint("10.0.0.9", "a", nil))},
			wantErr: `no endpoints available for service "web"`, code: 503},
		{name: "invalid id", id: "ftp:web:21", wantErr: `invalid service request "ftp:web:21"`, code: 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := fakeSource{svcs: map[string]*api.Service{"web": svc}, slices: c.slices, pods: pods}
			u, err := ServiceLocation(context.Background(), src, "ns", c.id, api.IPv4Protocol)
			if c.wantErr != "" {
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.Status().Code != c.code || se.Error() != c.wantErr {
					t.Fatalf("got %v, want %d %q", err, c.code, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != c.want {
				t.Errorf("got %s, want %s", u, c.want)
			}
		})
	}
}

func TestNodeLocation(t *testing.T) {
	t.Parallel()
	kt, pt := &http.Transport{}, &http.Transport{}
	k := Kubelet{Scheme: "https", Host: "192.0.2.10", Port: "10250", Transport: kt}
	ctx := context.Background()
	for _, c := range []struct {
		scheme, port string
		want         string
		rt           http.RoundTripper
	}{
		{"", "", "https://192.0.2.10:10250", kt},
		{"", "10250", "https://192.0.2.10:10250", kt},
		{"http", "8080", "http://192.0.2.10:8080", pt},
	} {
		u, rt, err := NodeLocation(ctx, k, c.scheme, c.port, pt)
		if err != nil || u.String() != c.want || rt != c.rt {
			t.Errorf("NodeLocation(%q, %q) = %v %p %v, want %s %p", c.scheme, c.port, u, rt, err, c.want, c.rt)
		}
	}
	k.Host = "127.0.0.1"
	_, _, err := NodeLocation(ctx, k, "", "", pt)
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.Status().Code != 400 || se.Error() != "address not allowed" {
		t.Errorf("loopback kubelet: got %v, want 400 address not allowed", err)
	}
}
