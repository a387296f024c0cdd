package app

import (
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func testEndpoints(ips []string, port int32) *api.Endpoints {
	e := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{labelSkipMirror: "true"}}}
	sub := api.EndpointSubset{Ports: []api.EndpointPort{{Name: "https", Port: port, Protocol: api.ProtocolTCP}}}
	for _, ip := range ips {
		sub.Addresses = append(sub.Addresses, api.EndpointAddress{IP: ip})
	}
	e.Subsets = []api.EndpointSubset{sub}
	return e
}

func addressesOf(e *api.Endpoints) []string {
	var ips []string
	for _, s := range e.Subsets {
		for _, ad := range s.Addresses {
			ips = append(ips, ad.IP)
		}
	}
	return ips
}

// TestSetMasterCountEndpoints: the cases of kube-apiserver's
// instancecount_test.go.
func TestSetMasterCountEndpoints(t *testing.T) {
	ports := []api.EndpointPort{{Name: "https", Port: 6443, Protocol: api.ProtocolTCP}}
	for _, c := range []struct {
		name    string
		ip      string
		count   int
		initial []string
		want    []string // nil: unchanged
	}{
		{"satisfy", "1.2.3.4", 1, []string{"1.2.3.4"}, nil},
		{"too many", "1.2.3.4", 1, []string{"1.2.3.4", "4.3.2.1"}, []string{"1.2.3.4"}},
		{"too many + extra masters", "1.2.3.4", 4, []string{"1.2.3.4", "4.3.2.1", "4.3.2.2", "4.3.2.3", "4.3.2.4"}, []string{"1.2.3.4", "4.3.2.2", "4.3.2.3", "4.3.2.4"}},
		{"too many + extra masters + delete first", "4.3.2.4", 4, []string{"1.2.3.4", "4.3.2.1", "4.3.2.2", "4.3.2.3", "4.3.2.4"}, []string{"4.3.2.1", "4.3.2.2", "4.3.2.3", "4.3.2.4"}},
		{"fewer than the count", "4.3.2.2", 4, []string{"4.3.2.1", "4.3.2.2"}, nil},
		{"own address missing, fewer than the count", "4.3.2.2", 4, []string{"4.3.2.1"}, []string{"4.3.2.1", "4.3.2.2"}},
		{"wrong address", "1.2.3.4", 1, []string{"4.3.2.1"}, []string{"1.2.3.4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := testEndpoints(c.initial, 6443)
			changed := setMasterCountEndpoints(e, c.ip, ports, c.count, true)
			if c.want == nil {
				if changed || !slices.Equal(addressesOf(e), c.initial) {
					t.Fatalf("changed %v to %v, want unchanged", changed, addressesOf(e))
				}
				return
			}
			if !changed || !slices.Equal(addressesOf(e), c.want) {
				t.Fatalf("changed %v to %v, want %v", changed, addressesOf(e), c.want)
			}
		})
	}
	// A wrong port is reset only when ports are reconciled.
	e := testEndpoints([]string{"1.2.3.4"}, 443)
	if setMasterCountEndpoints(e, "1.2.3.4", ports, 1, false) {
		t.Fatal("port reset without reconcilePorts")
	}
	if !setMasterCountEndpoints(e, "1.2.3.4", ports, 1, true) || e.Subsets[0].Ports[0].Port != 6443 {
		t.Fatalf("port not reset: %+v", e.Subsets)
	}
}

// TestSetLeaseEndpoints: the addresses become the leases', sorted; none
// at all leave no subset (RepackSubsets); the skip-mirror label is set.
func TestSetLeaseEndpoints(t *testing.T) {
	ports := []api.EndpointPort{{Name: "https", Port: 6443, Protocol: api.ProtocolTCP}}
	e := testEndpoints([]string{"10.0.0.3"}, 6443)
	if setLeaseEndpoints(e, []string{"10.0.0.3"}, ports, true) {
		t.Fatal("changed endpoints that were right")
	}
	if !setLeaseEndpoints(e, []string{"10.0.0.1", "10.0.0.2"}, ports, false) || !slices.Equal(addressesOf(e), []string{"10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("addresses %v", addressesOf(e))
	}
	e = &api.Endpoints{}
	if !setLeaseEndpoints(e, []string{"10.0.0.1"}, ports, false) || e.Labels[labelSkipMirror] != "true" || len(e.Subsets) != 1 || len(e.Subsets[0].Ports) != 1 {
		t.Fatalf("new endpoints %+v", e)
	}
	if !setLeaseEndpoints(e, nil, ports, false) || e.Subsets != nil {
		t.Fatalf("no leases: %+v", e.Subsets)
	}
}
