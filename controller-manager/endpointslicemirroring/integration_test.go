package endpointslicemirroring_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// TestMirroring is the conformance spec "EndpointSliceMirroring should
// mirror a custom Endpoints resource through create update and delete"
// against our apiserver, with kube's labels, owner and annotations, plus
// the Endpoints kube does not mirror: of a Service with a selector, or
// labelled skip-mirror.
func TestMirroring(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"endpointslicemirroring"}, nil)
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace("m")
	services := client.Resource[api.Service](cl.Client).Namespace("m")
	endpoints := client.Resource[api.Endpoints](cl.Client).Namespace("m")
	slices := client.Resource[api.EndpointSlice](cl.Client).Namespace("m")
	for _, svc := range []*api.Service{
		{ObjectMeta: api.ObjectMeta{Name: "custom"}, Spec: api.ServiceSpec{Ports: []api.ServicePort{{Name: "example", Port: 80, Protocol: api.ProtocolTCP}}}},
		{ObjectMeta: api.ObjectMeta{Name: "skipped"}, Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80}}}},
		{ObjectMeta: api.ObjectMeta{Name: "selected"}, Spec: api.ServiceSpec{Selector: map[string]string{"app": "x"}, Ports: []api.ServicePort{{Port: 80}}}},
	} {
		if _, err := services.Create(ctx, svc); err != nil {
			t.Fatal(err)
		}
	}
	subsets := func(ip string) []api.EndpointSubset {
		return []api.EndpointSubset{{Ports: []api.EndpointPort{{Port: 80}}, Addresses: []api.EndpointAddress{{IP: ip}}}}
	}
	eps, err := endpoints.Create(ctx, &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "custom", Labels: map[string]string{"team": "a"},
		Annotations: map[string]string{"note": "kept", "endpoints.kubernetes.io/last-change-trigger-time": "2020-01-01T00:00:00Z"}},
		Subsets: subsets("10.1.2.3")})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*api.Endpoints{
		{ObjectMeta: api.ObjectMeta{Name: "skipped", Labels: map[string]string{"endpointslice.kubernetes.io/skip-mirror": "true"}}, Subsets: subsets("10.0.0.1")},
		{ObjectMeta: api.ObjectMeta{Name: "selected"}, Subsets: subsets("10.0.0.2")},
	} {
		if _, err := endpoints.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	mirrored := func(name, ip string) func() (bool, error) {
		return func() (bool, error) {
			list, err := slices.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=" + name})
			if err != nil {
				return false, err
			}
			if ip == "" {
				return len(list.Items) == 0, fmt.Errorf("%d slices", len(list.Items))
			}
			if len(list.Items) != 1 {
				return false, fmt.Errorf("%d slices", len(list.Items))
			}
			s := list.Items[0]
			ok := len(s.Ports) == 1 && *s.Ports[0].Port == 80 && *s.Ports[0].Protocol == api.ProtocolTCP &&
				len(s.Endpoints) == 1 && len(s.Endpoints[0].Addresses) == 1 && s.Endpoints[0].Addresses[0] == ip &&
				s.Endpoints[0].Conditions.Ready != nil && *s.Endpoints[0].Conditions.Ready && s.AddressType == api.AddressTypeIPv4
			return ok, fmt.Errorf("slice %+v", s)
		}
	}
	cl.Eventually(30*time.Second, "the mirrored slice", mirrored("custom", "10.1.2.3"))
	list, err := slices.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=custom"})
	if err != nil {
		t.Fatal(err)
	}
	s := list.Items[0]
	ref := api.GetControllerOf(&s.ObjectMeta)
	if s.Labels[api.LabelManagedBy] != "endpointslicemirroring-controller.k8s.io" || s.Labels["team"] != "a" ||
		s.Annotations["note"] != "kept" || len(s.Annotations) != 1 || s.GenerateName != "custom-" ||
		ref == nil || ref.Kind != "Endpoints" || ref.UID != eps.UID {
		t.Errorf("slice metadata = %+v", s.ObjectMeta)
	}

	eps.Subsets = subsets("10.2.3.4")
	if _, err := endpoints.Update(ctx, eps); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the update mirrored", mirrored("custom", "10.2.3.4"))
	// Steady: no further writes to the slice.
	list, _ = slices.List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=custom"})
	rv := list.Items[0].ResourceVersion
	time.Sleep(time.Second)
	if got, err := slices.Get(ctx, list.Items[0].Name); err != nil || got.ResourceVersion != rv {
		t.Errorf("slice rewritten in a steady state: %v %v", got, err)
	}

	for _, name := range []string{"skipped", "selected"} {
		if ok, err := mirrored(name, "")(); !ok {
			t.Errorf("endpoints %s mirrored: %v", name, err)
		}
	}

	if err := endpoints.Delete(ctx, "custom", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the deletion mirrored", mirrored("custom", ""))
}
