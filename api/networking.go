package api

// networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies, with
// every field of k8s.io/api v0.37.2. The ingress controller add-on
// (internal/ingress) routes the Ingresses of its class; every node's
// enforcer (kubelet/netpol) applies the NetworkPolicies.

// Ingress is a collection of rules that allow inbound connections to reach
// the endpoints defined by a backend.
type Ingress struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       IngressSpec   `json:"spec"`
	Status     IngressStatus `json:"status"`
}

// IngressClass represents the class of the Ingress, referenced by the Ingress
// Spec.
type IngressClass struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       IngressClassSpec `json:"spec"`
}

// NetworkPolicy describes what network traffic is allowed for a set of Pods
type NetworkPolicy struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       NetworkPolicySpec `json:"spec"`
}

// IngressSpec describes the Ingress the user wishes to exist.
type IngressSpec struct {
	IngressClassName *string         `json:"ingressClassName,omitempty"`
	DefaultBackend   *IngressBackend `json:"defaultBackend,omitempty"`
	TLS              []IngressTLS    `json:"tls,omitempty"`
	Rules            []IngressRule   `json:"rules,omitempty"`
}

// IngressStatus describe the current state of the Ingress.
type IngressStatus struct {
	LoadBalancer IngressLoadBalancerStatus `json:"loadBalancer"`
}

// IngressClassSpec provides information about the class of an Ingress.
type IngressClassSpec struct {
	Controller string                           `json:"controller,omitempty"`
	Parameters *IngressClassParametersReference `json:"parameters,omitempty"`
}

// NetworkPolicySpec provides the specification of a NetworkPolicy
type NetworkPolicySpec struct {
	PodSelector LabelSelector              `json:"podSelector"`
	Ingress     []NetworkPolicyIngressRule `json:"ingress,omitempty"`
	Egress      []NetworkPolicyEgressRule  `json:"egress,omitempty"`
	PolicyTypes []PolicyType               `json:"policyTypes,omitempty"`
}

// IngressBackend describes all endpoints for a given service and port.
type IngressBackend struct {
	Service  *IngressServiceBackend     `json:"service,omitempty"`
	Resource *TypedLocalObjectReference `json:"resource,omitempty"`
}

// IngressTLS describes the transport layer security associated with an
// ingress.
type IngressTLS struct {
	Hosts      []string `json:"hosts,omitempty"`
	SecretName string   `json:"secretName,omitempty"`
}

// IngressRule represents the rules mapping the paths under a specified host
// to the related backend services.
type IngressRule struct {
	Host             string `json:"host,omitempty"`
	IngressRuleValue `json:",inline"`
}

// IngressLoadBalancerStatus represents the status of a load-balancer.
type IngressLoadBalancerStatus struct {
	Ingress []IngressLoadBalancerIngress `json:"ingress,omitempty"`
}

// IngressClassParametersReference identifies an API object.
type IngressClassParametersReference struct {
	APIGroup  *string `json:"apiGroup,omitempty"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Scope     *string `json:"scope"`
	Namespace *string `json:"namespace,omitempty"`
}

// NetworkPolicyIngressRule describes a particular set of traffic that is
// allowed to the pods matched by a NetworkPolicySpec's podSelector.
type NetworkPolicyIngressRule struct {
	Ports []NetworkPolicyPort `json:"ports,omitempty"`
	From  []NetworkPolicyPeer `json:"from,omitempty"`
}

// NetworkPolicyEgressRule describes a particular set of traffic that is
// allowed out of pods matched by a NetworkPolicySpec's podSelector.
type NetworkPolicyEgressRule struct {
	Ports []NetworkPolicyPort `json:"ports,omitempty"`
	To    []NetworkPolicyPeer `json:"to,omitempty"`
}

// PolicyType is k8s.io/api's PolicyType.
type PolicyType string

// IngressServiceBackend references a Kubernetes Service as a Backend.
type IngressServiceBackend struct {
	Name string             `json:"name"`
	Port ServiceBackendPort `json:"port"`
}

// IngressRuleValue represents a rule to apply against incoming requests.
type IngressRuleValue struct {
	HTTP *HTTPIngressRuleValue `json:"http,omitempty"`
}

// IngressLoadBalancerIngress represents the status of a load-balancer ingress
// point.
type IngressLoadBalancerIngress struct {
	IP       string              `json:"ip,omitempty"`
	Hostname string              `json:"hostname,omitempty"`
	Ports    []IngressPortStatus `json:"ports,omitempty"`
}

// NetworkPolicyPort describes a port to allow traffic on
type NetworkPolicyPort struct {
	Protocol *Protocol    `json:"protocol,omitempty"`
	Port     *IntOrString `json:"port,omitempty"`
	EndPort  *int32       `json:"endPort,omitempty"`
}

// NetworkPolicyPeer describes a peer to allow traffic to/from.
type NetworkPolicyPeer struct {
	PodSelector       *LabelSelector `json:"podSelector,omitempty"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	IPBlock           *IPBlock       `json:"ipBlock,omitempty"`
}

// ServiceBackendPort is the service port being referenced.
type ServiceBackendPort struct {
	Name   string `json:"name,omitempty"`
	Number int32  `json:"number,omitempty"`
}

// HTTPIngressRuleValue is a list of http selectors pointing to backends.
type HTTPIngressRuleValue struct {
	Paths []HTTPIngressPath `json:"paths"`
}

// IngressPortStatus represents the error condition of a service port
type IngressPortStatus struct {
	Port     int32    `json:"port"`
	Protocol Protocol `json:"protocol"`
	Error    *string  `json:"error,omitempty"`
}

// IPBlock describes a particular CIDR (Ex.
type IPBlock struct {
	CIDR   string   `json:"cidr"`
	Except []string `json:"except,omitempty"`
}

// HTTPIngressPath associates a path with a backend.
type HTTPIngressPath struct {
	Path     string         `json:"path,omitempty"`
	PathType *PathType      `json:"pathType"`
	Backend  IngressBackend `json:"backend"`
}

// PathType is k8s.io/api's PathType.
type PathType string
