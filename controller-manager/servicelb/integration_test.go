package servicelb_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/controller-manager/servicelb"
	"github.com/minik8s/minik8s/internal/client"
)

// TestServiceLoadBalancer: on a real apiserver and controller-manager, a
// LoadBalancer Service gets the Ready nodes' addresses (ExternalIP before
// InternalIP, excluded and NotReady nodes left out) in
// status.loadBalancer.ingress with ipMode VIP and kube's service
// controller events; a node becoming Ready joins; a Service of another
// loadBalancerClass is left alone; a Service changed to ClusterIP has its
// load balancer status cleared.
func TestServiceLoadBalancer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver and the controller-manager")
	}
	cl := controllermanagertest.Start(t, []string{servicelb.Name}, func(o *app.Options) {})
	cl.Namespace("web")
	ctx := cl.Context(2 * time.Minute)
	nodes := client.Resource[api.Node](cl.Client)
	node := func(name string, ready bool, labels map[string]string, addrs ...api.NodeAddress) {
		t.Helper()
		n, err := nodes.Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: labels}})
		if err != nil {
			t.Fatal(err)
		}
		status := api.ConditionStatus(api.ConditionFalse)
		if ready {
			status = api.ConditionTrue
		}
		n.Status.Addresses = addrs
		n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: status, Reason: "Test"}}
		if _, err := nodes.UpdateStatus(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	internal := func(ip string) api.NodeAddress { return api.NodeAddress{Type: api.NodeInternalIP, Address: ip} }
	node("node-a", true, nil, internal("172.18.0.3"))
	node("node-b", true, nil, internal("172.18.0.4"), api.NodeAddress{Type: api.NodeExternalIP, Address: "198.51.100.4"})
	node("node-c", false, nil, internal("172.18.0.5"))
	node("node-d", true, map[string]string{servicelb.ExcludeLabel: ""}, internal("172.18.0.6"))

	services := client.Resource[api.Service](cl.Client).Namespace("web")
	other := "example.com/other-lb"
	for _, s := range []*api.Service{
		{ObjectMeta: api.ObjectMeta{Name: "front", Namespace: "web"}, Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "front"}, Ports: []api.ServicePort{{Port: 80, Protocol: api.ProtocolTCP}}}},
		{ObjectMeta: api.ObjectMeta{Name: "classy", Namespace: "web"}, Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, LoadBalancerClass: &other,
			Selector: map[string]string{"app": "front"}, Ports: []api.ServicePort{{Port: 80, Protocol: api.ProtocolTCP}}}},
	} {
		if _, err := services.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ingress := func(name string) string {
		s, err := services.Get(ctx, name)
		if err != nil {
			return err.Error()
		}
		var parts []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			mode := "<nil>"
			if in.IPMode != nil {
				mode = *in.IPMode
			}
			parts = append(parts, in.IP+"/"+mode)
		}
		return strings.Join(parts, ",")
	}
	waitIngress := func(name, want string) {
		t.Helper()
		cl.Eventually(30*time.Second, fmt.Sprintf("Service %s ingress %q", name, want), func() (bool, error) {
			if got := ingress(name); got != want {
				return false, fmt.Errorf("ingress %q", got)
			}
			return true, nil
		})
	}
	waitIngress("front", "172.18.0.3/VIP,198.51.100.4/VIP")

	// node-c becomes Ready and joins.
	n, err := nodes.Get(ctx, "node-c")
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions[0].Status = api.ConditionTrue
	if _, err := nodes.UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	waitIngress("front", "172.18.0.3/VIP,172.18.0.5/VIP,198.51.100.4/VIP")
	if got := ingress("classy"); got != "" {
		t.Errorf("the Service of class %s got ingress %q from the built-in load balancer", other, got)
	}

	// Kube's service controller events.
	cl.Eventually(30*time.Second, "EnsuringLoadBalancer and EnsuredLoadBalancer events", func() (bool, error) {
		evs, err := client.Resource[api.Event](cl.Client).Namespace("web").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		var reasons []string
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == "front" && e.Source.Component == "service-controller" {
				reasons = append(reasons, e.Reason)
			}
		}
		return slices.Contains(reasons, "EnsuringLoadBalancer") && slices.Contains(reasons, "EnsuredLoadBalancer"), nil
	})

	// Type ClusterIP: the status is cleared.
	s, err := services.Get(ctx, "front")
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Type = api.ServiceTypeClusterIP
	s.Spec.ExternalTrafficPolicy = ""
	s.Spec.AllocateLoadBalancerNodePorts = nil
	for i := range s.Spec.Ports {
		s.Spec.Ports[i].NodePort = 0
	}
	if _, err := services.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitIngress("front", "")
}
