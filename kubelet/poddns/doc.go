// Package poddns forms what a pod's containers see of names: its
// /etc/resolv.conf (the dnsPolicy with the cluster's DNS servers and search
// path, the node's resolver configuration and the pod's dnsConfig merged,
// cut to the resolver's limits) and its /etc/hosts (the kubelet-managed
// file with the pod's hostname and subdomain, or the node's own for a pod
// on the host network, then the hostAliases), as kube's kubelet forms them
// (pkg/kubelet/network/dns and kubelet_pods.go), byte for byte where a
// conformance spec reads them.
package poddns
