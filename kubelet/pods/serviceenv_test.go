package pods

import (
	"maps"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// kube's service variables: the kubernetes Service always, the pod's
// namespace's Services unless enableServiceLinks is false, none for
// headless Services or other namespaces.
func TestServiceVars(t *testing.T) {
	kubernetes := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec: api.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []api.ServicePort{{Name: "https", Port: 443, Protocol: "TCP"}}}}
	web := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "shop", Name: "web-front"},
		Spec: api.ServiceSpec{ClusterIP: "10.96.3.4", Ports: []api.ServicePort{{Port: 80}, {Name: "dns-udp", Port: 53, Protocol: "UDP"}}}}
	headless := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "shop", Name: "db"}, Spec: api.ServiceSpec{ClusterIP: "None", Ports: []api.ServicePort{{Port: 5432}}}}
	other := &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "else", Name: "x"}, Spec: api.ServiceSpec{ClusterIP: "10.96.9.9", Ports: []api.ServicePort{{Port: 1}}}}
	kubeVars := map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
	}
	webVars := map[string]string{
		"WEB_FRONT_SERVICE_HOST": "10.96.3.4", "WEB_FRONT_SERVICE_PORT": "80", "WEB_FRONT_SERVICE_PORT_DNS_UDP": "53",
		"WEB_FRONT_PORT":        "tcp://10.96.3.4:80",
		"WEB_FRONT_PORT_80_TCP": "tcp://10.96.3.4:80", "WEB_FRONT_PORT_80_TCP_PROTO": "tcp", "WEB_FRONT_PORT_80_TCP_PORT": "80", "WEB_FRONT_PORT_80_TCP_ADDR": "10.96.3.4",
		"WEB_FRONT_PORT_53_UDP": "udp://10.96.3.4:53", "WEB_FRONT_PORT_53_UDP_PROTO": "udp", "WEB_FRONT_PORT_53_UDP_PORT": "53", "WEB_FRONT_PORT_53_UDP_ADDR": "10.96.3.4",
	}
	off := false
	for _, tc := range []struct {
		name  string
		links *bool
		want  map[string]string
	}{
		{"service links", nil, func() map[string]string { m := maps.Clone(kubeVars); maps.Copy(m, webVars); return m }()},
		{"enableServiceLinks false", &off, kubeVars},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "shop"}, Spec: api.PodSpec{EnableServiceLinks: tc.links}}
			for _, svc := range []*api.Service{kubernetes, web, headless, other} {
				if chooseService(svc, pod) {
					serviceVars(svc, got)
				}
			}
			if !maps.Equal(got, tc.want) {
				for k, v := range tc.want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q", k, got[k], v)
					}
				}
				for k := range got {
					if _, ok := tc.want[k]; !ok {
						t.Errorf("unexpected %s=%s", k, got[k])
					}
				}
			}
		})
	}
}
