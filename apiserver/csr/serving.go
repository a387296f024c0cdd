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
