// Package netpol enforces NetworkPolicies (networking.k8s.io/v1) on one
// node, the job Kubernetes leaves to the network plugin (kube-router's
// policy controller, Calico's felix, kindnet's). It watches Pods,
// Namespaces and NetworkPolicies, computes for every pod on the node what
// it may receive (ingress) and send (egress) as Kubernetes specifies
// (model.go, pure functions), renders that as iptables filter chains named
// MINIK8S-NETPOL* (rules.go), and loads them with one iptables-restore per
// sync through the service proxy's Runner, rate limited like the proxy
// (enforcer.go).
//
// The chains are jumped from FORWARD (pod to pod on the node through the
// bridge, which br_netfilter hands to iptables, and to or from other
// nodes) and INPUT (a pod to its own node, checked against the pod's
// egress policies). OUTPUT is not filtered: traffic from the node to its
// pods (kubelet probes, hostNetwork pods) is always allowed, as Kubernetes
// requires, and a pod may always reach itself (through a Service too).
// Replies (conntrack ESTABLISHED,RELATED) always pass, so a
// policy applies to new connections; connections open before a policy
// changed keep going, which Kubernetes leaves to the implementation. Denied packets are rejected with an ICMP
// port unreachable, as kube-router does, so clients fail at once.
//
// Peers are pod IPs (podSelector, namespaceSelector) and CIDRs (ipBlock);
// pods on the host network count with their IP, the node's, so a policy
// that allows the cluster DNS pods (hostNetwork here) allows DNS. Named
// ports are resolved against the destination pod's container ports: for
// ingress the protected pod, for egress every pod among the peers that
// has the name (a name nobody has allows nothing). IPv4 only.
//
// The enforcer is its own loop beside the service proxy, not part of the
// kubelet's pod workers; it runs with the proxy's credentials, which the
// minik8s:network-policy-agent cluster role lets read pods, namespaces and
// network policies.
package netpol
