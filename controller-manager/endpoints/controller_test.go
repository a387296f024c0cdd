package endpoints

import (
	"context"
	"log/slog"
	"reflect"
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
	return &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: ports, ClusterIP: "10.96.0.10"}}
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

func addr(name, ip string) api.EndpointAddress {
	n := "n1"
	return api.EndpointAddress{IP: ip, NodeName: &n, TargetRef: &api.ObjectReference{Kind: "Pod", Namespace: "ns", Name: name, UID: api.UID("uid-" + name)}}
}

func TestSubsets(t *testing.T) {
	http := api.ServicePort{Name: "http", Port: 80, TargetPort: api.FromString("web"), Protocol: api.ProtocolTCP}
	num := api.ServicePort{Name: "n", Port: 81, TargetPort: api.FromInt(8081)}
	tests := []struct {
		name string
		svc  *api.Service
		pods []*api.Pod
		want []api.EndpointSubset
	}{
		{name: "ready and not ready", svc: svc(num), pods: []*api.Pod{pod("b", "10.0.0.2", true), pod("a", "10.0.0.1", false), pod("c", "10.0.0.3", true)},
			want: []api.EndpointSubset{{Addresses: []api.EndpointAddress{addr("b", "10.0.0.2"), addr("c", "10.0.0.3")},
				NotReadyAddresses: []api.EndpointAddress{addr("a", "10.0.0.1")},
				Ports:             []api.EndpointPort{{Name: "n", Port: 8081, Protocol: api.ProtocolTCP}}}}},
		{name: "named port resolved per pod", svc: svc(http),
			pods: []*api.Pod{pod("a", "10.0.0.1", true, api.ContainerPort{Name: "web", ContainerPort: 8080}),
				pod("b", "10.0.0.2", true, api.ContainerPort{Name: "web", ContainerPort: 9090}),
				pod("c", "10.0.0.3", true)},
			want: []api.EndpointSubset{
				{Addresses: []api.EndpointAddress{addr("a", "10.0.0.1")}, Ports: []api.EndpointPort{{Name: "http", Port: 8080, Protocol: api.ProtocolTCP}}},
				{Addresses: []api.EndpointAddress{addr("b", "10.0.0.2")}, Ports: []api.EndpointPort{{Name: "http", Port: 9090, Protocol: api.ProtocolTCP}}},
			}},
		{name: "pods without IP, terminal or terminating left out", svc: svc(num), pods: func() []*api.Pod {
			noIP := pod("a", "", true)
			done := pod("b", "10.0.0.2", false)
			done.Status.Phase = api.PodSucceeded
			now := api.Now()
			going := pod("c", "10.0.0.3", true)
			going.DeletionTimestamp = &now
			return []*api.Pod{noIP, done, going}
		}()},
		{name: "publishNotReadyAddresses", svc: func() *api.Service { s := svc(num); s.Spec.PublishNotReadyAddresses = true; return s }(),
			pods: []*api.Pod{pod("a", "10.0.0.1", false)},
			want: []api.EndpointSubset{{Addresses: []api.EndpointAddress{addr("a", "10.0.0.1")}, Ports: []api.EndpointPort{{Name: "n", Port: 8081, Protocol: api.ProtocolTCP}}}}},
		{name: "targetPort defaults to port", svc: svc(api.ServicePort{Port: 80}), pods: []*api.Pod{pod("a", "10.0.0.1", true)},
			want: []api.EndpointSubset{{Addresses: []api.EndpointAddress{addr("a", "10.0.0.1")}, Ports: []api.EndpointPort{{Port: 80, Protocol: api.ProtocolTCP}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Subsets(tt.svc, tt.pods)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("subsets =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestSync(t *testing.T) {
	num := api.ServicePort{Name: "n", Port: 81, TargetPort: api.FromInt(8081)}
	noSelector := svc(num)
	noSelector.Spec.Selector = nil
	stale := &api.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "web"}}
	tests := []struct {
		name       string
		objs       []api.Object
		wantWrites []string
		wantReady  int
	}{
		{name: "creates", objs: []api.Object{svc(num), pod("a", "10.0.0.1", true)}, wantWrites: []string{"create endpoints ns"}, wantReady: 1},
		{name: "updates", objs: []api.Object{svc(num), pod("a", "10.0.0.1", true), stale}, wantWrites: []string{"update endpoints ns/web"}, wantReady: 1},
		{name: "service gone", objs: []api.Object{pod("a", "10.0.0.1", true), stale}, wantWrites: []string{"delete endpoints ns/web"}},
		{name: "no selector: left alone", objs: []api.Object{noSelector, stale}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, tt.objs...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			c := NewController(srv.Client(), informer.Shared[api.Service](f, "", client.ListOptions{}), informer.Shared[api.Pod](f, "", client.ListOptions{}),
				informer.Shared[api.Endpoints](f, "", client.ListOptions{}), &events.FakeRecorder{}, slog.New(slog.DiscardHandler))
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
			if tt.wantReady > 0 {
				var ep api.Endpoints
				srv.Object(client.Resource[api.Endpoints](srv.Client()).Info(), "ns", "web", &ep)
				if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != tt.wantReady {
					t.Fatalf("endpoints = %+v", ep)
				}
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	addrs := func(n int) []api.EndpointAddress { return make([]api.EndpointAddress, n) }
	tests := []struct {
		name                string
		ready, notReady     [2]int // per subset
		wantReady, wantNotR [2]int
		want                bool
	}{
		{name: "under capacity", ready: [2]int{500, 400}, notReady: [2]int{50, 50}, wantReady: [2]int{500, 400}, wantNotR: [2]int{50, 50}},
		{name: "not ready cut first", ready: [2]int{500, 400}, notReady: [2]int{100, 100}, wantReady: [2]int{500, 400}, wantNotR: [2]int{50, 50}, want: true},
		{name: "ready cut by share", ready: [2]int{900, 300}, notReady: [2]int{10, 0}, wantReady: [2]int{750, 250}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subsets := []api.EndpointSubset{
				{Addresses: addrs(tt.ready[0]), NotReadyAddresses: addrs(tt.notReady[0])},
				{Addresses: addrs(tt.ready[1]), NotReadyAddresses: addrs(tt.notReady[1])},
			}
			if got := truncate(subsets); got != tt.want {
				t.Fatalf("truncate = %v, want %v", got, tt.want)
			}
			for i := range subsets {
				if len(subsets[i].Addresses) != tt.wantReady[i] || len(subsets[i].NotReadyAddresses) != tt.wantNotR[i] {
					t.Fatalf("subset %d: %d ready %d not ready, want %d %d", i, len(subsets[i].Addresses), len(subsets[i].NotReadyAddresses), tt.wantReady[i], tt.wantNotR[i])
				}
			}
		})
	}
}
