package nodeports_test

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeports"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func TestFilter(t *testing.T) {
	withPort := func(name string, ip string, proto api.Protocol, port int32) *api.Pod {
		p := schedtest.Pod("ns", name, "", "")
		p.Spec.Containers[0].Ports = []api.ContainerPort{{ContainerPort: port, HostPort: port, HostIP: ip, Protocol: proto}}
		return p
	}
	cases := []struct {
		name     string
		existing []*api.Pod
		pod      *api.Pod
		want     string
	}{
		{"no ports", []*api.Pod{withPort("a", "", "TCP", 80)}, schedtest.Pod("ns", "p", "", ""), ""},
		{"free port", []*api.Pod{withPort("a", "", "TCP", 80)}, withPort("p", "", "TCP", 81), ""},
		{"same port", []*api.Pod{withPort("a", "", "TCP", 80)}, withPort("p", "", "TCP", 80), nodeports.ErrReason},
		{"same port other protocol", []*api.Pod{withPort("a", "", "TCP", 80)}, withPort("p", "", "UDP", 80), ""},
		{"default protocol is TCP", []*api.Pod{withPort("a", "", "", 80)}, withPort("p", "", "TCP", 80), nodeports.ErrReason},
		{"different host IPs", []*api.Pod{withPort("a", "10.0.0.1", "TCP", 80)}, withPort("p", "10.0.0.2", "TCP", 80), ""},
		{"wildcard against IP", []*api.Pod{withPort("a", "10.0.0.1", "TCP", 80)}, withPort("p", "0.0.0.0", "TCP", 80), nodeports.ErrReason},
		{"IP against wildcard", []*api.Pod{withPort("a", "", "TCP", 80)}, withPort("p", "10.0.0.2", "TCP", 80), nodeports.ErrReason},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ni := schedtest.NodeInfo(schedtest.Node("n", "1", "1Gi", 10), tc.existing...)
			if s := schedtest.Filter(nodeports.Plugin{}, tc.pod, ni); s.Message() != tc.want {
				t.Errorf("got %q, want %q", s.Message(), tc.want)
			}
		})
	}
}
