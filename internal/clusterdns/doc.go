// Package clusterdns is the cluster's DNS server (the part of CoreDNS's
// kubernetes plugin a pod needs): it answers SERVICE.NAMESPACE.svc.DOMAIN
// from watched Services and EndpointSlices (A, SRV for named ports, pod IPs
// for headless Services), A-B-C-D.NAMESPACE.pod.DOMAIN, and forwards every
// other name to the upstream resolvers.
package clusterdns
