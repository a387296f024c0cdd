package api

import (
	"strings"

	"github.com/minik8s/minik8s/api/resource"
)

// Well-known namespaces.
const (
	NamespaceDefault   = "default"
	NamespaceSystem    = "kube-system"
	NamespacePublic    = "kube-public"
	NamespaceNodeLease = "kube-node-lease"
	// NamespaceAll is the empty namespace: all namespaces in a list or watch.
	NamespaceAll = ""
)

// ConditionStatus is the status of a condition: True, False or Unknown (the
// ConditionTrue/False/Unknown constants of meta.go).
type ConditionStatus string

// ResourceName is the name of a compute resource ("cpu", "memory", ...).
type ResourceName string

// Resource names Kubernetes defines.
const (
	ResourceCPU              ResourceName = "cpu"
	ResourceMemory           ResourceName = "memory"
	ResourceStorage          ResourceName = "storage"
	ResourceEphemeralStorage ResourceName = "ephemeral-storage"
	ResourcePods             ResourceName = "pods"
)

// ResourceList is a set of resource amounts, as in requests, limits,
// capacity and allocatable.
type ResourceList map[ResourceName]resource.Quantity

// IsExtendedResourceName reports whether name is an extended resource
// (example.com/foo), as kube's helper: domain-prefixed outside
// kubernetes.io, and not a quota's "requests." name. (Validation keeps
// names that are not qualified out of objects.)
func IsExtendedResourceName(name ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, "kubernetes.io/") && !strings.HasPrefix(s, "requests.")
}

// Cpu returns the cpu amount (zero when absent).
func (rl ResourceList) Cpu() resource.Quantity { return rl[ResourceCPU] }

// Memory returns the memory amount (zero when absent).
func (rl ResourceList) Memory() resource.Quantity { return rl[ResourceMemory] }

// Pods returns the pods amount (zero when absent).
func (rl ResourceList) Pods() resource.Quantity { return rl[ResourcePods] }

// ObjectReference points at another object, possibly a field of it.
type ObjectReference struct {
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             UID    `json:"uid,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	FieldPath       string `json:"fieldPath,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	Name string `json:"name,omitempty"`
}

// Namespace (core/v1) scopes names of namespaced objects.
type Namespace struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       NamespaceSpec   `json:"spec,omitzero"`
	Status     NamespaceStatus `json:"status,omitzero"`
}

// NamespaceList is a list of Namespaces.
type NamespaceList = List[Namespace]

// FinalizerName names a namespace finalizer (spec.finalizers).
type FinalizerName string

// FinalizerKubernetes is the namespace finalizer the namespace controller
// removes once the namespace's content is gone.
const FinalizerKubernetes FinalizerName = "kubernetes"

// NamespaceSpec is the specification of a Namespace.
type NamespaceSpec struct {
	Finalizers []FinalizerName `json:"finalizers,omitempty"`
}

// NamespacePhase is the lifecycle phase of a namespace.
type NamespacePhase string

// Namespace phases.
const (
	NamespaceActive      NamespacePhase = "Active"
	NamespaceTerminating NamespacePhase = "Terminating"
)

// NamespaceConditionType is the type of a namespace condition.
type NamespaceConditionType string

// Namespace condition types set by the namespace controller.
const (
	NamespaceDeletionDiscoveryFailure NamespaceConditionType = "NamespaceDeletionDiscoveryFailure"
	NamespaceDeletionContentFailure   NamespaceConditionType = "NamespaceDeletionContentFailure"
	NamespaceDeletionGVParsingFailure NamespaceConditionType = "NamespaceDeletionGroupVersionParsingFailure"
	NamespaceContentRemaining         NamespaceConditionType = "NamespaceContentRemaining"
	NamespaceFinalizersRemaining      NamespaceConditionType = "NamespaceFinalizersRemaining"
)

// NamespaceStatus is the observed state of a Namespace.
type NamespaceStatus struct {
	Phase      NamespacePhase       `json:"phase,omitempty"`
	Conditions []NamespaceCondition `json:"conditions,omitempty"`
}

// NamespaceCondition is one condition of a namespace.
type NamespaceCondition struct {
	Type               NamespaceConditionType `json:"type"`
	Status             ConditionStatus        `json:"status"`
	LastTransitionTime Time                   `json:"lastTransitionTime,omitzero"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
}

// ConfigMap (core/v1) holds non-confidential configuration data.
type ConfigMap struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	// Immutable, once true, forbids changes to data and binaryData.
	Immutable  *bool             `json:"immutable,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

// ConfigMapList is a list of ConfigMaps.
type ConfigMapList = List[ConfigMap]

// Secret (core/v1) holds confidential data. Data values are bytes, base64
// in JSON; StringData is a write-only convenience the apiserver merges into
// Data on write.
type Secret struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Immutable  *bool             `json:"immutable,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
	StringData map[string]string `json:"stringData,omitempty"`
	Type       SecretType        `json:"type,omitempty"`
}

// SecretList is a list of Secrets.
type SecretList = List[Secret]

// SecretType says how a secret's data is to be used.
type SecretType string

// Secret types and the data keys Kubernetes requires for them.
const (
	SecretTypeOpaque              SecretType = "Opaque"
	SecretTypeServiceAccountToken SecretType = "kubernetes.io/service-account-token"
	SecretTypeDockercfg           SecretType = "kubernetes.io/dockercfg"
	SecretTypeDockerConfigJSON    SecretType = "kubernetes.io/dockerconfigjson"
	SecretTypeBasicAuth           SecretType = "kubernetes.io/basic-auth"
	SecretTypeSSHAuth             SecretType = "kubernetes.io/ssh-auth"
	SecretTypeTLS                 SecretType = "kubernetes.io/tls"
	SecretTypeBootstrapToken      SecretType = "bootstrap.kubernetes.io/token"

	DockerConfigKey         = ".dockercfg"
	DockerConfigJSONKey     = ".dockerconfigjson"
	BasicAuthUsernameKey    = "username"
	BasicAuthPasswordKey    = "password"
	SSHAuthPrivateKey       = "ssh-privatekey"
	TLSCertKey              = "tls.crt"
	TLSPrivateKeyKey        = "tls.key"
	ServiceAccountNameKey   = "kubernetes.io/service-account.name"
	ServiceAccountUIDKey    = "kubernetes.io/service-account.uid"
	ServiceAccountTokenKey  = "token"
	ServiceAccountRootCAKey = "ca.crt"
)

// Event (core/v1) reports something that happened to an object.
type Event struct {
	TypeMeta       `json:",inline"`
	ObjectMeta     `json:"metadata"`
	InvolvedObject ObjectReference `json:"involvedObject"`
	Reason         string          `json:"reason,omitempty"`
	Message        string          `json:"message,omitempty"`
	Source         EventSource     `json:"source"`         // written even when empty, as kube does
	FirstTimestamp Time            `json:"firstTimestamp"` // null when unset, as kube writes it
	LastTimestamp  Time            `json:"lastTimestamp"`  // null when unset, as kube writes it
	Count          int32           `json:"count,omitempty"`
	// Type is EventTypeNormal or EventTypeWarning.
	Type      string           `json:"type,omitempty"`
	EventTime MicroTime        `json:"eventTime,omitzero"`
	Series    *EventSeries     `json:"series,omitempty"`
	Action    string           `json:"action,omitempty"`
	Related   *ObjectReference `json:"related,omitempty"`
	// ReportingController is "reportingComponent" in JSON, as in Kubernetes.
	ReportingController string `json:"reportingComponent"`
	ReportingInstance   string `json:"reportingInstance"`
}

// EventList is a list of Events.
type EventList = List[Event]

// Event types.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// EventSource names the component (and host) that reported an event.
type EventSource struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}

// EventSeries describes an event that keeps recurring.
type EventSeries struct {
	Count            int32     `json:"count,omitempty"`
	LastObservedTime MicroTime `json:"lastObservedTime,omitzero"`
}

// Binding (core/v1) binds a pod to a node; it is the body of a POST to
// pods/NAME/binding and is not stored.
type Binding struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Target     ObjectReference `json:"target"`
}

// Endpoints (core/v1) lists the addresses backing a service.
type Endpoints struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Subsets    []EndpointSubset `json:"subsets,omitempty"`
}

// EndpointsList is a list of Endpoints.
type EndpointsList = List[Endpoints]

// EndpointSubset is a group of addresses sharing a set of ports.
type EndpointSubset struct {
	Addresses         []EndpointAddress `json:"addresses,omitempty"`
	NotReadyAddresses []EndpointAddress `json:"notReadyAddresses,omitempty"`
	Ports             []EndpointPort    `json:"ports,omitempty"`
}

// EndpointAddress is one backend address.
type EndpointAddress struct {
	IP        string           `json:"ip"`
	Hostname  string           `json:"hostname,omitempty"`
	NodeName  *string          `json:"nodeName,omitempty"`
	TargetRef *ObjectReference `json:"targetRef,omitempty"`
}

// EndpointPort is one port of an EndpointSubset.
type EndpointPort struct {
	Name        string   `json:"name,omitempty"`
	Port        int32    `json:"port"`
	Protocol    Protocol `json:"protocol,omitempty"`
	AppProtocol *string  `json:"appProtocol,omitempty"`
}
