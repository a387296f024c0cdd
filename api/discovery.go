package api

// EndpointSlice (discovery.k8s.io/v1) lists a subset of the endpoints of a
// service.
type EndpointSlice struct {
	TypeMeta    `json:",inline"`
	ObjectMeta  `json:"metadata"`
	AddressType AddressType         `json:"addressType"`
	Endpoints   []Endpoint          `json:"endpoints"`
	Ports       []EndpointSlicePort `json:"ports"`
}

// EndpointSliceList is a list of EndpointSlices.
type EndpointSliceList = List[EndpointSlice]

// Labels of endpoint slices.
const (
	// LabelServiceName names the service a slice belongs to.
	LabelServiceName = "kubernetes.io/service-name"
	// LabelManagedBy names the controller managing a slice.
	LabelManagedBy = "endpointslice.kubernetes.io/managed-by"
)

// AddressType is the kind of addresses an endpoint slice holds.
type AddressType string

// Address types.
const (
	AddressTypeIPv4 AddressType = "IPv4"
	AddressTypeIPv6 AddressType = "IPv6"
	AddressTypeFQDN AddressType = "FQDN"
)

// Endpoint is one backend of an endpoint slice.
type Endpoint struct {
	Addresses          []string           `json:"addresses"`
	Conditions         EndpointConditions `json:"conditions,omitzero"`
	Hostname           *string            `json:"hostname,omitempty"`
	TargetRef          *ObjectReference   `json:"targetRef,omitempty"`
	DeprecatedTopology map[string]string  `json:"deprecatedTopology,omitempty"`
	NodeName           *string            `json:"nodeName,omitempty"`
	Zone               *string            `json:"zone,omitempty"`
	Hints              *EndpointHints     `json:"hints,omitempty"`
}

// EndpointConditions are the states of an endpoint; nil means unknown.
type EndpointConditions struct {
	Ready       *bool `json:"ready,omitempty"`
	Serving     *bool `json:"serving,omitempty"`
	Terminating *bool `json:"terminating,omitempty"`
}

// EndpointHints are topology hints for consumers of an endpoint.
type EndpointHints struct {
	ForZones []ForZone `json:"forZones,omitempty"`
	ForNodes []ForNode `json:"forNodes,omitempty"`
}

// ForZone names a zone that should consume an endpoint.
type ForZone struct {
	Name string `json:"name"`
}

// ForNode names a node that should consume an endpoint.
type ForNode struct {
	Name string `json:"name"`
}

// EndpointSlicePort is a port of an endpoint slice (discovery/v1
// EndpointPort; renamed here because core/v1 has an EndpointPort too).
type EndpointSlicePort struct {
	Name        *string   `json:"name,omitempty"`
	Protocol    *Protocol `json:"protocol,omitempty"`
	Port        *int32    `json:"port,omitempty"`
	AppProtocol *string   `json:"appProtocol,omitempty"`
}
