package endpointslice_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// 105 ready pods give two slices (100 + 5); terminating pods stay listed as
// serving and terminating but not ready; a service without pods keeps one
// empty slice; the slices go when the service does.
func TestSlicesSplitAndTerminating(t *testing.T) {
	const ns = "es"
	cl := controllermanagertest.Start(t, []string{"endpointslice"}, nil)
	ctx := cl.Context(3 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	svcs := client.Resource[api.Service](c).Namespace(ns)
	esl := client.Resource[api.EndpointSlice](c).Namespace(ns)
	pods := client.Resource[api.Pod](c).Namespace(ns)
	if _, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "big"}, Spec: api.ServiceSpec{
		Selector: map[string]string{"app": "big"}, Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}}}); err != nil {
		t.Fatal(err)
	}
	slicesOf := func() []api.EndpointSlice {
		l, err := esl.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=big"})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	cl.Eventually(30*time.Second, "placeholder slice", func() (bool, error) {
		s := slicesOf()
		return len(s) == 1 && len(s[0].Endpoints) == 0, nil
	})
	const n = 105
	for i := range n {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("p%03d", i), Labels: map[string]string{"app": "big"},
			Finalizers: []string{"test.minik8s.io/hold"}},
			Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		cl.SetPodStatus(ns, p.Name, api.PodRunning, fmt.Sprintf("10.244.%d.%d", i/200, i%200+1), true)
	}
	cl.Eventually(60*time.Second, "105 endpoints in slices of at most 100", func() (bool, error) {
		total := 0
		s := slicesOf()
		for _, sl := range s {
			if len(sl.Endpoints) > 100 {
				return false, fmt.Errorf("slice %s has %d endpoints", sl.Name, len(sl.Endpoints))
			}
			for _, e := range sl.Endpoints {
				if *e.Conditions.Ready {
					total++
				}
			}
		}
		return total == n && len(s) == 2, fmt.Errorf("%d slices, %d ready endpoints", len(s), total)
	})
	// A terminating pod (held by its finalizer) is serving and terminating.
	if err := pods.Delete(ctx, "p000", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "terminating endpoint", func() (bool, error) {
		for _, sl := range slicesOf() {
			for _, e := range sl.Endpoints {
				if e.TargetRef != nil && e.TargetRef.Name == "p000" {
					return !*e.Conditions.Ready && *e.Conditions.Serving && *e.Conditions.Terminating, nil
				}
			}
		}
		return false, fmt.Errorf("p000 not listed")
	})
	if err := svcs.Delete(ctx, "big", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "slices gone with the service", func() (bool, error) { return len(slicesOf()) == 0, nil })
}
