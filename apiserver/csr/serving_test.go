package csr

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestForeignSANs(t *testing.T) {
	t.Parallel()
	node := &api.Node{Status: api.NodeStatus{Addresses: []api.NodeAddress{
		{Type: api.NodeHostName, Address: "node-1"},
		{Type: api.NodeInternalIP, Address: "172.18.0.3"},
		{Type: api.NodeExternalDNS, Address: "node-1.example.com"},
		{Type: api.NodeExternalIP, Address: "2001:db8::7"},
	}}}
	ipHost := &api.Node{Status: api.NodeStatus{Addresses: []api.NodeAddress{{Type: api.NodeHostName, Address: "10.0.0.9"}}}}
	ips := func(s ...string) []net.IP {
		var out []net.IP
		for _, a := range s {
			out = append(out, net.ParseIP(a))
		}
		return out
	}
	tests := []struct {
		name string
		node *api.Node
		req  x509.CertificateRequest
		want []string
	}{
		{"all its own", node, x509.CertificateRequest{DNSNames: []string{"node-1", "NODE-1.example.com"}, IPAddresses: ips("172.18.0.3", "2001:db8::7")}, nil},
		{"an IP hostname is an IP", ipHost, x509.CertificateRequest{IPAddresses: ips("10.0.0.9")}, nil},
		{"an IP hostname is not a DNS name", ipHost, x509.CertificateRequest{DNSNames: []string{"10.0.0.9"}}, []string{"DNS:10.0.0.9"}},
		{"an internal IP is not a DNS name", node, x509.CertificateRequest{DNSNames: []string{"172.18.0.3"}}, []string{"DNS:172.18.0.3"}},
		{"the apiserver's names", node, x509.CertificateRequest{DNSNames: []string{"node-1", "kubernetes.default.svc"}, IPAddresses: ips("172.18.0.3", "10.96.0.1")},
			[]string{"DNS:kubernetes.default.svc", "IP:10.96.0.1"}},
	}
	for _, tt := range tests {
		if got := foreignSANs(&tt.req, tt.node); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// reserved is a cluster as apiservertest and the install scripts make it:
// the default Service range and domain, and the apiserver's SANs
// (pki.EnsureServing's names, its advertise address 192.168.1.10).
var reserved = ReservedNames{
	ClusterDomain: "cluster.local",
	ServiceCIDRs:  []*net.IPNet{mustCIDR("10.96.0.0/12")},
	APIServerDNS:  []string{"localhost", "cp-host", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	APIServerIPs:  []net.IP{net.ParseIP("192.168.1.10"), net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// servingCSR is node's kubelet-serving request for the given SANs.
func servingCSR(t *testing.T, node string, dns []string, ips ...string) *api.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}, DNSNames: dns}
	for _, s := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(s))
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return &api.CertificateSigningRequest{Spec: api.CertificateSigningRequestSpec{
		Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), SignerName: KubeletServingSigner,
		Usages: []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth}, Username: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}}
}

// TestServingReservedSANs: a node that lists the apiserver's names, a
// Service IP, another node's address or an in-cluster name among its own
// status.addresses (it writes them itself) is still denied them, and the
// denial names each; its own addresses (loopback ones included, when not
// the apiserver's) are approved.
func TestServingReservedSANs(t *testing.T) {
	t.Parallel()
	nodes := map[string]*api.Node{
		"evil": {ObjectMeta: api.ObjectMeta{Name: "evil"}},
		"good": {ObjectMeta: api.ObjectMeta{Name: "good"}, Status: api.NodeStatus{Addresses: []api.NodeAddress{
			{Type: api.NodeHostName, Address: "good"}, {Type: api.NodeInternalIP, Address: "10.0.0.5"}, {Type: api.NodeInternalIP, Address: "127.0.0.2"}}}},
	}
	c := &Controller{ApproveServing: true, Reserved: reserved,
		Nodes: func(_ context.Context, name string) (*api.Node, error) { return nodes[name], nil },
		OtherNodes: func(context.Context) ([]*api.Node, error) {
			return []*api.Node{nodes["evil"], nodes["good"]}, nil
		}}
	tests := []struct {
		name string
		dns  []string
		ips  []string
		deny []string // parts of the message; nil: approved
	}{
		{"its own", []string{"evil"}, []string{"10.0.0.9"}, nil},
		{"its own loopback", nil, []string{"127.0.0.3"}, nil},
		{"kubernetes.default.svc", []string{"evil", "kubernetes.default.svc"}, nil, []string{"DNS:kubernetes.default.svc (the kubernetes Service's name)"}},
		{"kubernetes", []string{"KUBERNETES"}, nil, []string{"DNS:KUBERNETES (the kubernetes Service's name)"}},
		{"kubernetes.default.svc.cluster.local", []string{"kubernetes.default.svc.cluster.local"}, nil, []string{"DNS:kubernetes.default.svc.cluster.local (the kubernetes Service's name)"}},
		{"a service", []string{"db.prod.svc"}, nil, []string{"DNS:db.prod.svc (an in-cluster Service name)"}},
		{"a service in the domain", []string{"db.prod.svc.cluster.local"}, nil, []string{"DNS:db.prod.svc.cluster.local (an in-cluster Service name)"}},
		{"the cluster domain", []string{"cluster.local"}, nil, []string{"DNS:cluster.local (an in-cluster Service name)"}},
		{"the service IP", nil, []string{"10.96.0.1"}, []string{"IP:10.96.0.1 (an address of the apiserver's serving certificate)"}},
		{"another service IP", nil, []string{"10.100.3.4"}, []string{"IP:10.100.3.4 (in the Service IP range)"}},
		{"the apiserver's address", nil, []string{"192.168.1.10"}, []string{"IP:192.168.1.10 (an address of the apiserver's serving certificate)"}},
		{"the apiserver's host name", []string{"cp-host", "localhost"}, nil, []string{"DNS:cp-host (a name of the apiserver's serving certificate)", "DNS:localhost (a name of the apiserver's serving certificate)"}},
		{"the apiserver's loopback", nil, []string{"127.0.0.1"}, []string{"IP:127.0.0.1 (an address of the apiserver's serving certificate)"}},
		{"another node's IP", nil, []string{"10.0.0.5"}, []string{`IP:10.0.0.5 (an address of node "good")`}},
		{"another node's loopback", nil, []string{"127.0.0.2"}, []string{`IP:127.0.0.2 (an address of node "good")`}},
		{"another node's name", []string{"Good"}, nil, []string{`DNS:Good (an address of node "good")`}},
	}
	for _, tt := range tests {
		// The attacker lists every name it asks for as its own.
		var addrs []api.NodeAddress
		for _, d := range tt.dns {
			addrs = append(addrs, api.NodeAddress{Type: api.NodeInternalDNS, Address: d})
		}
		for _, ip := range tt.ips {
			addrs = append(addrs, api.NodeAddress{Type: api.NodeInternalIP, Address: ip})
		}
		nodes["evil"] = &api.Node{ObjectMeta: api.ObjectMeta{Name: "evil"}, Status: api.NodeStatus{Addresses: addrs}}
		v := c.servingVerdictFor(context.Background(), servingCSR(t, "evil", tt.dns, tt.ips...))
		if tt.deny == nil {
			if !v.approve || v.deny {
				t.Errorf("%s: %+v, want approved", tt.name, v)
			}
			continue
		}
		if v.approve || !v.deny || !strings.HasPrefix(v.message, `Denying kubelet serving certificate: node "evil" may not request subject alternative names `) {
			t.Errorf("%s: %+v, want denied", tt.name, v)
			continue
		}
		for _, want := range tt.deny {
			if !strings.Contains(v.message, want) {
				t.Errorf("%s: message %q does not say %q", tt.name, v.message, want)
			}
		}
	}
}
