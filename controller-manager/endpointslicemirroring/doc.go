// Package endpointslicemirroring is kube's EndpointSliceMirroring
// controller ("endpointslicemirroring" in --controllers): for every custom
// Endpoints, the Endpoints of a Service without a selector (which the
// endpoints and endpointslice controllers leave alone), it keeps
// EndpointSlices named ENDPOINTS-xxxxx, labelled kubernetes.io/service-name
// and endpointslice.kubernetes.io/managed-by
// endpointslicemirroring-controller.k8s.io and controlled by the
// Endpoints, holding its addresses grouped by subset ports and address
// type. Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true or
// carrying a leader-election record are not mirrored, and the slices go
// when the Endpoints, its Service, or the Service's lack of a selector go.
package endpointslicemirroring
