package pods

import (
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// A runtime that owns the pod network (a CRI runtime): the pod manager
// makes no CNI call, takes the pod IP the sandbox reports (the node's for
// a host-network pod), and hands the runtime the pod's hostPorts and
// whether a container is privileged.
func TestFakeRuntimeOwnsPodNetwork(t *testing.T) {
	priv := true
	web := fakePod("web", api.Container{Name: "main", Ports: []api.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 53, HostPort: 5353, Protocol: api.ProtocolUDP}},
		SecurityContext: &api.SecurityContext{Privileged: &priv}})
	host := fakePod("host", api.Container{Name: "main"})
	host.Spec.HostNetwork = true
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetOwnsPodNetwork(true) }, web, host)
	p := n.waitPod("web", "Running", isRunning)
	if !strings.HasPrefix(p.Status.PodIP, "10.89.0.") {
		t.Errorf("podIP %q, want the runtime's (10.89.0.x)", p.Status.PodIP)
	}
	h := n.waitPod("host", "Running", isRunning)
	if h.Status.PodIP != "192.0.2.10" {
		t.Errorf("host-network podIP %q, want the node's", h.Status.PodIP)
	}
	var webCfg *runtime.SandboxConfig
	for _, c := range n.rt.SandboxConfigs() {
		if c.PodName == "web" {
			webCfg = &c
		}
	}
	want := []runtime.PortMapping{{HostPort: 8080, ContainerPort: 80, Protocol: "TCP"}, {HostPort: 5353, ContainerPort: 53, Protocol: "UDP"}}
	if webCfg == nil || !webCfg.Privileged || !slices.Equal(webCfg.PortMappings, want) {
		t.Errorf("sandbox config %+v, want privileged with ports %+v", webCfg, want)
	}
	if err := client.Resource[api.Pod](n.api.Client()).Namespace("default").Delete(t.Context(), "web", nil); err != nil {
		t.Fatal(err)
	}
	n.wait("web's sandbox removed", func() bool {
		cs, _ := n.rt.ListPodContainers(t.Context(), string(p.UID))
		return len(cs) == 0
	})
	if a := n.net.Actions(); len(a) != 0 {
		t.Errorf("CNI calls %q, want none", a)
	}
}
