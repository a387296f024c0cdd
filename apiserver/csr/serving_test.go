package csr

import (
	"crypto/x509"
	"net"
	"slices"
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
