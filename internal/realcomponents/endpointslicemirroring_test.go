package realcomponents

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
)

// TestEndpointSliceMirroringAsKube: the same custom Endpoints (two
// subsets, ready and not-ready addresses, IPv4 and IPv6, hostnames, node
// names, target references, labels and annotations) mirrored by the real kube-controller-manager's
// endpointslicemirroring controller on one apiserver and by ours on
// another give the same EndpointSlices, but for their generated names
// and uids (a slice's endpoints compared in address order).
func TestEndpointSliceMirroringAsKube(t *testing.T) {
	// Not parallel: controllermanagertest.Start sets KUBECONFIG for the test.
	if testing.Short() {
		t.Skip("runs the real kube-controller-manager (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	s := apiservertest.Start(t, apiservertest.WithTLS)
	kubeAdmin := s.AdminClient(t)
	kubeconfig := filepath.Join(s.Options.CertDir, "controller-manager.kubeconfig")
	port := freePort(t)
	launch(t, "kube-controller-manager", oracle.Path(t, "kube-controller-manager"),
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port), "--cert-dir="+t.TempDir(),
		"--leader-elect=false", "--controllers=endpointslicemirroring", "-v=4")
	ours := controllermanagertest.Start(t, []string{"endpointslicemirroring"}, nil)

	node := "node-1"
	eps := &api.Endpoints{
		ObjectMeta: api.ObjectMeta{Name: "custom", Namespace: "default", Labels: map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "kept", "endpoints.kubernetes.io/last-change-trigger-time": "2020-01-01T00:00:00Z"}},
		Subsets: []api.EndpointSubset{
			{
				Ports: []api.EndpointPort{{Name: "http", Port: 8080, Protocol: api.ProtocolTCP}},
				Addresses: []api.EndpointAddress{{IP: "10.1.2.3", Hostname: "h1", NodeName: &node,
					TargetRef: &api.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p1"}}, {IP: "fd00::1"}},
				NotReadyAddresses: []api.EndpointAddress{{IP: "10.1.2.4"}},
			},
			{
				Ports:     []api.EndpointPort{{Name: "dns", Port: 53, Protocol: api.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: api.ProtocolTCP}},
				Addresses: []api.EndpointAddress{{IP: "10.9.9.9"}, {IP: "10.1.2.5"}},
			},
		},
	}
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "custom", Namespace: "default"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Name: "http", Port: 80}}}}
	mirrored := func(c *client.Client) []api.EndpointSlice {
		t.Helper()
		if _, err := client.Resource[api.Service](c).Namespace("default").Create(ctx, api.DeepCopy(svc)); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Resource[api.Endpoints](c).Namespace("default").Create(ctx, api.DeepCopy(eps)); err != nil {
			t.Fatal(err)
		}
		var out []api.EndpointSlice
		waitFor(ctx, t, "3 mirrored slices", func() (bool, string) {
			list, err := client.Resource[api.EndpointSlice](c).Namespace("default").List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=custom"})
			if err != nil {
				return false, err.Error()
			}
			out = list.Items
			b, _ := json.Marshal(out)
			return len(out) == 3, string(b)
		})
		time.Sleep(time.Second) // any rewrite would show in the resourceVersions
		list, err := client.Resource[api.EndpointSlice](c).Namespace("default").List(ctx, client.ListOptions{LabelSelector: api.LabelServiceName + "=custom"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if list.Items[i].ResourceVersion != out[i].ResourceVersion {
				t.Errorf("slice %s rewritten in a steady state", out[i].Name)
			}
		}
		for i := range out {
			// kube's order of a slice's endpoints comes from a set.
			sort.Slice(out[i].Endpoints, func(a, b int) bool { return out[i].Endpoints[a].Addresses[0] < out[i].Endpoints[b].Addresses[0] })
			m := &out[i].ObjectMeta
			m.Name, m.UID, m.ResourceVersion, m.CreationTimestamp, m.ManagedFields, m.Generation = "", "", "", api.Time{}, nil, 0
			for j := range m.OwnerReferences {
				m.OwnerReferences[j].UID = ""
			}
		}
		sort.Slice(out, func(i, j int) bool {
			a, _ := json.Marshal(out[i])
			b, _ := json.Marshal(out[j])
			return string(a) < string(b)
		})
		return out
	}
	want := mirrored(kubeAdmin)
	got := mirrored(ours.Client)
	wb, _ := json.MarshalIndent(want, "", " ")
	gb, _ := json.MarshalIndent(got, "", " ")
	if string(wb) != string(gb) {
		t.Errorf("slices differ from kube-controller-manager's\nours: %s\nkube: %s", gb, wb)
	}
}
