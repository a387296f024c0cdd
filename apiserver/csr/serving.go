package csr

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/authz"
)

// KubeletServingSigner issues kubelets' serving certificates.
const KubeletServingSigner = api.KubeletServingSignerName

// Reasons of the kubelet serving approver's conditions.
const (
	ReasonServingApproved = "AutoApproved"
	ReasonServingDenied   = "KubeletServingCertificateNotAllowed"
)

// servingVerdict is what the kubelet serving approver decides for a
// request: approve, deny (with the reason's message), or leave it alone
// (neither: it is not a node asking for itself, someone else's business).
type servingVerdict struct {
	approve, deny bool
	message       string
}

// servingVerdictFor is minik8s' kubelet serving approver (Kubernetes
// approves no kubelet-serving request by itself; clusters run an add-on
// such as kubelet-csr-approver with these rules). A request filed by a
// node (system:node:NAME in system:nodes) is approved when it has the
// shape the signer issues (validation.ValidateKubeletServingCSR), names
// that node (CN=system:node:NAME) and every DNS and IP subject
// alternative name is one of the Node's status.addresses (its hostname
// included); otherwise it is denied, saying why. Requests filed by
// anyone else are left for an administrator.
func (c *Controller) servingVerdictFor(ctx context.Context, csr *api.CertificateSigningRequest) servingVerdict {
	node, ok := strings.CutPrefix(csr.Spec.Username, authz.NodeUserPrefix)
	if !ok || node == "" || !slices.Contains(csr.Spec.Groups, authz.NodesGroup) {
		return servingVerdict{message: "not requested by a node"}
	}
	deny := func(format string, args ...any) servingVerdict {
		return servingVerdict{deny: true, message: fmt.Sprintf(format, args...)}
	}
	x, err := validation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return deny("Denying kubelet serving certificate: %v", err)
	}
	if err := validation.ValidateKubeletServingCSR(x, csr.Spec.Usages); err != nil {
		return deny("Denying kubelet serving certificate: not a kubelet serving certificate request: %v", err)
	}
	if x.Subject.CommonName != csr.Spec.Username {
		return deny("Denying kubelet serving certificate: node %q may only request a certificate for CN=%s, not CN=%s",
			node, csr.Spec.Username, x.Subject.CommonName)
	}
	n, err := c.Nodes(ctx, node)
	switch {
	case apierrors.IsNotFound(err):
		return deny("Denying kubelet serving certificate: node %q not found", node)
	case err != nil:
		return servingVerdict{message: fmt.Sprintf("get node %q: %v", node, err)}
	}
	if bad := foreignSANs(x, n); len(bad) > 0 {
		return deny("Denying kubelet serving certificate: subject alternative names %s are not addresses of node %q (status.addresses: %s)",
			strings.Join(bad, ", "), node, addressList(n))
	}
	// A node writes its own status.addresses, so they prove nothing about
	// names others own: the apiserver's and the Services' (the signer is
	// the CA pods trust for the apiserver), and other nodes' addresses.
	var others []*api.Node
	if c.OtherNodes != nil {
		all, err := c.OtherNodes(ctx)
		if err != nil {
			return servingVerdict{message: fmt.Sprintf("list nodes: %v", err)}
		}
		for _, o := range all {
			if o.Name != node {
				others = append(others, o)
			}
		}
	}
	if bad := c.Reserved.reservedSANs(x, others); len(bad) > 0 {
		return deny("Denying kubelet serving certificate: node %q may not request subject alternative names %s",
			node, strings.Join(bad, "; "))
	}
	return servingVerdict{approve: true, message: fmt.Sprintf(
		"Auto approving kubelet serving certificate: every subject alternative name is an address of node %q.", node)}
}

// foreignSANs lists the request's DNS and IP names that are not among the
// node's addresses: a DNS name must be a Hostname, InternalDNS or
// ExternalDNS address, an IP an InternalIP or ExternalIP one (or a
// Hostname that is an IP), as kube's kubelet asks for (its
// addressesToHostnamesAndIPs).
func foreignSANs(x *x509.CertificateRequest, n *api.Node) []string {
	var dns []string
	var ips []net.IP
	for _, a := range n.Status.Addresses {
		switch a.Type {
		case api.NodeHostName:
			if ip := net.ParseIP(a.Address); ip != nil {
				ips = append(ips, ip)
			} else {
				dns = append(dns, a.Address)
			}
		case api.NodeInternalDNS, api.NodeExternalDNS:
			dns = append(dns, a.Address)
		case api.NodeInternalIP, api.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil {
				ips = append(ips, ip)
			}
		}
	}
	var bad []string
	for _, d := range x.DNSNames {
		if !slices.ContainsFunc(dns, func(h string) bool { return strings.EqualFold(h, d) }) {
			bad = append(bad, "DNS:"+d)
		}
	}
	for _, ip := range x.IPAddresses {
		if !slices.ContainsFunc(ips, ip.Equal) {
			bad = append(bad, "IP:"+ip.String())
		}
	}
	return bad
}

// ReservedNames are the names no kubelet serving certificate may carry,
// whatever the requesting Node lists in its status.addresses.
type ReservedNames struct {
	// ClusterDomain is the DNS domain of in-cluster names (cluster.local).
	ClusterDomain string
	// ServiceCIDRs are the Service ClusterIP ranges
	// (--service-cluster-ip-range).
	ServiceCIDRs []*net.IPNet
	// APIServerDNS and APIServerIPs are the SANs of the apiserver's own
	// serving certificate.
	APIServerDNS []string
	APIServerIPs []net.IP
}

// reservedSANs lists, each with why, the request's names that are not a
// node's to claim: the kubernetes Service's names, any name under .svc or
// .svc.<cluster domain> and the cluster domain itself, IPs in the Service
// ranges, the apiserver's own serving SANs, and any address another node
// lists. Loopback IPs are refused when they are an apiserver SAN (its
// certificate always names 127.0.0.1) and allowed otherwise: kube's
// kubelet never asks for them, but minik8s' tests run kubelets on other
// 127.0.0.0/8 addresses, and a loopback certificate only serves its
// holder's own host.
func (r ReservedNames) reservedSANs(x *x509.CertificateRequest, others []*api.Node) []string {
	domain := strings.ToLower(strings.TrimSuffix(r.ClusterDomain, "."))
	var bad []string
	for _, d := range x.DNSNames {
		l := strings.ToLower(strings.TrimSuffix(d, "."))
		switch {
		case l == "kubernetes" || l == "kubernetes.default" || l == "kubernetes.default.svc" || strings.HasPrefix(l, "kubernetes.default.svc."):
			bad = append(bad, fmt.Sprintf("DNS:%s (the kubernetes Service's name)", d))
		case l == "svc" || strings.HasSuffix(l, ".svc") || (domain != "" && (l == domain || strings.HasSuffix(l, ".svc."+domain) || l == "svc."+domain)):
			bad = append(bad, fmt.Sprintf("DNS:%s (an in-cluster Service name)", d))
		case slices.ContainsFunc(r.APIServerDNS, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "."), l) }):
			bad = append(bad, fmt.Sprintf("DNS:%s (a name of the apiserver's serving certificate)", d))
		default:
			if o := nodeListing(others, func(a api.NodeAddress) bool {
				return net.ParseIP(a.Address) == nil && strings.EqualFold(strings.TrimSuffix(a.Address, "."), l)
			}); o != "" {
				bad = append(bad, fmt.Sprintf("DNS:%s (an address of node %q)", d, o))
			}
		}
	}
	for _, ip := range x.IPAddresses {
		switch {
		case slices.ContainsFunc(r.APIServerIPs, ip.Equal):
			bad = append(bad, fmt.Sprintf("IP:%s (an address of the apiserver's serving certificate)", ip))
		case slices.ContainsFunc(r.ServiceCIDRs, func(n *net.IPNet) bool { return n.Contains(ip) }):
			bad = append(bad, fmt.Sprintf("IP:%s (in the Service IP range)", ip))
		case ip.IsUnspecified() || ip.IsMulticast():
			bad = append(bad, fmt.Sprintf("IP:%s (not a unicast address)", ip))
		default:
			if o := nodeListing(others, func(a api.NodeAddress) bool {
				other := net.ParseIP(a.Address)
				return other != nil && other.Equal(ip)
			}); o != "" {
				bad = append(bad, fmt.Sprintf("IP:%s (an address of node %q)", ip, o))
			}
		}
	}
	return bad
}

// nodeListing returns the name of the first node with an address that
// matches, or "".
func nodeListing(nodes []*api.Node, match func(api.NodeAddress) bool) string {
	for _, n := range nodes {
		if slices.ContainsFunc(n.Status.Addresses, match) {
			return n.Name
		}
	}
	return ""
}

func addressList(n *api.Node) string {
	if len(n.Status.Addresses) == 0 {
		return "none"
	}
	out := make([]string, len(n.Status.Addresses))
	for i, a := range n.Status.Addresses {
		out[i] = string(a.Type) + "=" + a.Address
	}
	return strings.Join(out, ", ")
}
