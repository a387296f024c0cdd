// Package serviceresolver turns a Service reference (namespace, name, port)
// into the address the apiserver dials to reach it, for admission webhooks
// (and anything else the apiserver calls through a Service).
//
// kube-apiserver dials the Service's ClusterIP unless
// --enable-aggregator-routing picks an endpoint itself. minik8s' apiserver
// does not run on the Service network (no proxy rules on its host), so
// Endpoints routing, a ready endpoint of the Service's EndpointSlices at the
// port's target, is the one that reaches a pod; ClusterIP routing is there
// for hosts that do route ClusterIPs. ExternalName Services resolve to their
// external name either way.
package serviceresolver
