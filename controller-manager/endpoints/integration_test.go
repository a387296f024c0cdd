package endpoints_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const ns = "ep"

func webPod(name, node string, port int32) *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c", Image: "busybox",
			Ports: []api.ContainerPort{{Name: "http", ContainerPort: port}}}}}}
}

type view struct {
	ready, notReady []string // "ip@node:port"
}

func endpointsView(ep *api.Endpoints) view {
	var v view
	for _, s := range ep.Subsets {
		for _, p := range s.Ports {
			if p.Name != "http" {
				continue
			}
			for _, a := range s.Addresses {
				v.ready = append(v.ready, fmt.Sprintf("%s@%s:%d", a.IP, *a.NodeName, p.Port))
			}
			for _, a := range s.NotReadyAddresses {
				v.notReady = append(v.notReady, fmt.Sprintf("%s@%s:%d", a.IP, *a.NodeName, p.Port))
			}
		}
	}
	sort.Strings(v.ready)
	sort.Strings(v.notReady)
	return v
}

func slicesView(l []api.EndpointSlice) view {
	var v view
	for _, s := range l {
		for _, p := range s.Ports {
			if p.Name == nil || *p.Name != "http" {
				continue
			}
			for _, e := range s.Endpoints {
				k := fmt.Sprintf("%s@%s:%d", e.Addresses[0], *e.NodeName, *p.Port)
				if *e.Conditions.Ready {
					v.ready = append(v.ready, k)
				} else {
					v.notReady = append(v.notReady, k)
				}
			}
		}
	}
	sort.Strings(v.ready)
	sort.Strings(v.notReady)
	return v
}

func (v view) String() string { return fmt.Sprintf("ready %v notReady %v", v.ready, v.notReady) }

// Endpoints and EndpointSlices follow pods becoming ready and not ready,
// resolve the named target port per pod, leave selector-less services
// alone and go with their service.
func TestEndpointsTrackPods(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"endpoints", "endpointslice"}, nil)
	ctx := cl.Context(2 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	svcs := client.Resource[api.Service](c).Namespace(ns)
	eps := client.Resource[api.Endpoints](c).Namespace(ns)
	esl := client.Resource[api.EndpointSlice](c).Namespace(ns)
	if _, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.ServiceSpec{
		Selector: map[string]string{"app": "web"},
		Ports:    []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromString("http")}, {Name: "metrics", Port: 9100, TargetPort: api.FromInt(9100)}},
	}}); err != nil {
		t.Fatal(err)
	}
	manual := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "external"}, Subsets: []api.EndpointSubset{{
		Addresses: []api.EndpointAddress{{IP: "192.0.2.1"}}, Ports: []api.EndpointPort{{Port: 443}}}}}
	if _, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "external"}, Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 443}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eps.Create(ctx, manual); err != nil {
		t.Fatal(err)
	}
	for i, p := range []*api.Pod{webPod("a", "n1", 8080), webPod("b", "n2", 8081), webPod("c", "n1", 8080)} {
		if _, err := client.Resource[api.Pod](c).Namespace(ns).Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		cl.SetPodStatus(ns, p.Name, api.PodRunning, fmt.Sprintf("10.244.0.%d", i+1), p.Name != "c")
	}
	// A pod of another app is not included.
	other := webPod("other", "n1", 8080)
	other.Labels = map[string]string{"app": "db"}
	if _, err := client.Resource[api.Pod](c).Namespace(ns).Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	cl.SetPodStatus(ns, "other", api.PodRunning, "10.244.0.9", true)

	want := func(what string, v view) {
		t.Helper()
		cl.Eventually(30*time.Second, what, func() (bool, error) {
			ep, err := eps.Get(ctx, "web")
			if err != nil {
				return false, err
			}
			l, err := esl.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=web"})
			if err != nil {
				return false, err
			}
			got, gotSlices := endpointsView(ep), slicesView(l.Items)
			if got.String() != v.String() || gotSlices.String() != v.String() {
				return false, fmt.Errorf("endpoints %s, slices %s, want %s", got, gotSlices, v)
			}
			return true, nil
		})
	}
	want("initial endpoints", view{ready: []string{"10.244.0.1@n1:8080", "10.244.0.2@n2:8081"}, notReady: []string{"10.244.0.3@n1:8080"}})

	cl.SetPodStatus(ns, "c", api.PodRunning, "10.244.0.3", true)
	cl.SetPodStatus(ns, "a", api.PodRunning, "10.244.0.1", false)
	want("after readiness changes", view{ready: []string{"10.244.0.2@n2:8081", "10.244.0.3@n1:8080"}, notReady: []string{"10.244.0.1@n1:8080"}})

	if err := client.Resource[api.Pod](c).Namespace(ns).Delete(ctx, "b", &api.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	want("after a pod is deleted", view{ready: []string{"10.244.0.3@n1:8080"}, notReady: []string{"10.244.0.1@n1:8080"}})

	// The numeric port is there too, for every pod.
	ep, err := eps.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	metrics := 0
	for _, s := range ep.Subsets {
		for _, p := range s.Ports {
			if p.Name == "metrics" && p.Port == 9100 && p.Protocol == api.ProtocolTCP {
				metrics += len(s.Addresses) + len(s.NotReadyAddresses)
			}
		}
	}
	if metrics != 2 {
		t.Fatalf("metrics port on %d addresses, want 2: %+v", metrics, ep.Subsets)
	}
	l, err := esl.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Items {
		if s.Labels[api.LabelManagedBy] != "endpointslice-controller.k8s.io" || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Service" ||
			len(s.Name) != len("web-")+5 || s.AddressType != api.AddressTypeIPv4 {
			t.Fatalf("slice metadata %+v addressType %s", s.ObjectMeta, s.AddressType)
		}
	}

	// The selector-less service's Endpoints are the user's.
	time.Sleep(time.Second)
	if got, err := eps.Get(ctx, "external"); err != nil || len(got.Subsets) != 1 || got.Subsets[0].Addresses[0].IP != "192.0.2.1" {
		t.Fatalf("manual endpoints changed: %+v, %v", got, err)
	}

	if err := svcs.Delete(ctx, "web", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "endpoints and slices gone with the service", func() (bool, error) {
		_, err := eps.Get(ctx, "web")
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		l, err := esl.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=web"})
		return err == nil && len(l.Items) == 0, err
	})
}
