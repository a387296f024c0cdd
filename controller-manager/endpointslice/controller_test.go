package endpointslice

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

func svc(ports ...api.ServicePort) *api.Service {
	return &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "web", UID: "svc-uid"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: ports}}
}

func pod(name, ip string, ready bool, ports ...api.ContainerPort) *api.Pod {
	st := api.ConditionStatus(api.ConditionFalse)
	if ready {
		st = api.ConditionTrue
	}
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: api.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec:   api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "c", Image: "i", Ports: ports}}},
		Status: api.PodStatus{Phase: api.PodRunning, PodIP: ip, Conditions: []api.PodCondition{{Type: api.PodReady, Status: st}}}}
}

type cond struct{ ready, serving, terminating bool }

func TestDesired(t *testing.T) {
	named := api.ServicePort{Name: "http", Port: 80, TargetPort: api.FromString("web")}
	num := api.ServicePort{Name: "n", Port: 81, TargetPort: api.FromInt(8081)}
	now := api.Now()
	terminating := pod("t", "10.0.0.9", true)
	terminating.DeletionTimestamp = &now
	many := make([]*api.Pod, 250)
	for i := range many {
		many[i] = pod(fmt.Sprintf("p%03d", i), fmt.Sprintf("10.0.%d.%d", i/200, i%200), true)
	}
	tests := []struct {
		name      string
		svc       *api.Service
		pods      []*api.Pod
		wantSizes []int
		wantPorts []int32 // first port of each slice
		wantConds map[string]cond
	}{
		{name: "placeholder", svc: svc(num), wantSizes: []int{0}, wantPorts: []int32{0}},
		{name: "conditions", svc: svc(num), pods: []*api.Pod{pod("a", "10.0.0.1", true), pod("b", "10.0.0.2", false), terminating},
			wantSizes: []int{3}, wantPorts: []int32{8081},
			wantConds: map[string]cond{"10.0.0.1": {true, true, false}, "10.0.0.2": {false, false, false}, "10.0.0.9": {false, true, true}}},
		{name: "named ports split slices", svc: svc(named),
			pods:      []*api.Pod{pod("a", "10.0.0.1", true, api.ContainerPort{Name: "web", ContainerPort: 8080}), pod("b", "10.0.0.2", true, api.ContainerPort{Name: "web", ContainerPort: 9090}), pod("c", "10.0.0.3", true)},
			wantSizes: []int{1, 1}, wantPorts: []int32{8080, 9090}},
		{name: "at most 100 per slice", svc: svc(num), pods: many, wantSizes: []int{100, 100, 50}, wantPorts: []int32{8081, 8081, 8081}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Desired(tt.svc, tt.pods, MaxEndpointsPerSlice)
			var sizes []int
			var ports []int32
			for _, d := range got {
				sizes = append(sizes, len(d.Endpoints))
				if len(d.Ports) > 0 {
					ports = append(ports, *d.Ports[0].Port)
				} else {
					ports = append(ports, 0)
				}
				for _, ep := range d.Endpoints {
					if w, ok := tt.wantConds[ep.Addresses[0]]; ok {
						g := cond{*ep.Conditions.Ready, *ep.Conditions.Serving, *ep.Conditions.Terminating}
						if g != w {
							t.Errorf("%s conditions = %+v, want %+v", ep.Addresses[0], g, w)
						}
						if ep.NodeName == nil || *ep.NodeName != "n1" || ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" {
							t.Errorf("%s nodeName/targetRef = %v %+v", ep.Addresses[0], ep.NodeName, ep.TargetRef)
						}
					}
				}
			}
			if !slices.Equal(sizes, tt.wantSizes) || !slices.Equal(ports, tt.wantPorts) {
				t.Fatalf("slices sizes %v ports %v, want %v %v", sizes, ports, tt.wantSizes, tt.wantPorts)
			}
		})
	}
}

func managedSlice(name string, eps ...api.Endpoint) *api.EndpointSlice {
	return &api.EndpointSlice{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name,
		Labels: map[string]string{api.LabelServiceName: "web", api.LabelManagedBy: ControllerName}},
		AddressType: api.AddressTypeIPv4, Endpoints: eps}
}

func TestSync(t *testing.T) {
	num := api.ServicePort{Name: "n", Port: 81, TargetPort: api.FromInt(8081)}
	tests := []struct {
		name       string
		objs       []api.Object
		wantWrites []string
	}{
		{name: "creates", objs: []api.Object{svc(num), pod("a", "10.0.0.1", true)}, wantWrites: []string{"create endpointslices.discovery.k8s.io ns"}},
		{name: "placeholder kept", objs: []api.Object{svc(), managedSlice("web-abcde")}},
		{name: "stale slice replaced", objs: []api.Object{svc(num), pod("a", "10.0.0.1", true), managedSlice("web-abcde")},
			wantWrites: []string{"create endpointslices.discovery.k8s.io ns", "delete endpointslices.discovery.k8s.io ns/web-abcde"}},
		{name: "service gone", objs: []api.Object{managedSlice("web-abcde")}, wantWrites: []string{"delete endpointslices.discovery.k8s.io ns/web-abcde"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, tt.objs...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			c, err := NewController(srv.Client(), informer.Shared[api.Service](f, "", client.ListOptions{}), informer.Shared[api.Pod](f, "", client.ListOptions{}),
				informer.Shared[api.EndpointSlice](f, "", client.ListOptions{LabelSelector: api.LabelManagedBy + "=" + ControllerName}), &events.FakeRecorder{}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			f.Start(ctx)
			f.WaitForCacheSync(ctx)
			srv.ClearActions()
			if err := c.sync(ctx, "ns/web"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range srv.Actions() {
				if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
					got = append(got, a.String())
				}
			}
			if !slices.Equal(got, tt.wantWrites) {
				t.Fatalf("writes = %q, want %q", got, tt.wantWrites)
			}
		})
	}
}
