// Package clusterdns is the cluster's DNS server: the part of CoreDNS's
// kubernetes plugin (with "pods insecure" and "fallthrough in-addr.arpa
// ip6.arpa") and forward plugin a cluster needs, answering as they do. From
// watched Services, EndpointSlices and Namespaces it answers
// SERVICE.NAMESPACE.svc.DOMAIN (A/AAAA of the ClusterIPs, or of the ready
// endpoints of a headless Service; CNAME of an ExternalName, followed),
// ENDPOINT.SERVICE.NAMESPACE.svc.DOMAIN (the endpoint's hostname or dashed
// address), _PORT._PROTO.SERVICE.NAMESPACE.svc.DOMAIN and the Service's
// own name for SRV (per endpoint for headless Services),
// A-B-C-D.NAMESPACE.pod.DOMAIN, and PTR for ClusterIPs and endpoint
// addresses; names that do not exist are NXDOMAIN and names without records
// of the type NODATA, as a resolver walking its search path needs. Every
// other name is forwarded to the upstream resolvers over the client's
// transport. UDP answers are truncated to the client's buffer.
package clusterdns
