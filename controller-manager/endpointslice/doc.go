// Package endpointslice is kube's endpointslice controller: for every
// Service with a selector it keeps EndpointSlices named SERVICE-xxxxx,
// labelled kubernetes.io/service-name and managed-by
// endpointslice-controller.k8s.io and owned by the service, holding the
// matching pods as endpoints (ready / serving / terminating, node name,
// target reference) grouped by their resolved ports, at most
// MaxEndpointsPerSlice per slice.
package endpointslice
