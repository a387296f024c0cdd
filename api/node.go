package api

// Node (core/v1) is a worker machine; its kubelet registers and reports it.
type Node struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       NodeSpec   `json:"spec,omitzero"`
	Status     NodeStatus `json:"status,omitzero"`
}

// NodeList is a list of Nodes.
type NodeList = List[Node]

// Well-known node labels.
const (
	LabelHostname           = "kubernetes.io/hostname"
	LabelOSStable           = "kubernetes.io/os"
	LabelArchStable         = "kubernetes.io/arch"
	LabelTopologyZone       = "topology.kubernetes.io/zone"
	LabelTopologyRegion     = "topology.kubernetes.io/region"
	LabelInstanceTypeStable = "node.kubernetes.io/instance-type"
	LabelNodeExcludeBalance = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// Taint keys the node lifecycle controller and the kubelet set.
const (
	TaintNodeNotReady           = "node.kubernetes.io/not-ready"
	TaintNodeUnreachable        = "node.kubernetes.io/unreachable"
	TaintNodeUnschedulable      = "node.kubernetes.io/unschedulable"
	TaintNodeMemoryPressure     = "node.kubernetes.io/memory-pressure"
	TaintNodeDiskPressure       = "node.kubernetes.io/disk-pressure"
	TaintNodeNetworkUnavailable = "node.kubernetes.io/network-unavailable"
	TaintNodePIDPressure        = "node.kubernetes.io/pid-pressure"
	TaintNodeOutOfService       = "node.kubernetes.io/out-of-service"
)

// NodeSpec is the desired state of a node.
type NodeSpec struct {
	PodCIDR       string   `json:"podCIDR,omitempty"`
	PodCIDRs      []string `json:"podCIDRs,omitempty"`
	ProviderID    string   `json:"providerID,omitempty"`
	Unschedulable bool     `json:"unschedulable,omitempty"`
	Taints        []Taint  `json:"taints,omitempty"`
	// ConfigSource is the deprecated dynamic kubelet configuration, kept
	// for manifests.
	ConfigSource *NodeConfigSource `json:"configSource,omitempty"`
	// DoNotUseExternalID is deprecated and kept for manifests.
	DoNotUseExternalID  string                   `json:"externalID,omitempty"`
	PodPreemptionPolicy *NodePodPreemptionPolicy `json:"podPreemptionPolicy,omitempty"`
}

// NodeConfigSource names a kubelet configuration (deprecated).
type NodeConfigSource struct {
	ConfigMap *ConfigMapNodeConfigSource `json:"configMap,omitempty"`
}

// ConfigMapNodeConfigSource is a ConfigMap holding a kubelet configuration.
type ConfigMapNodeConfigSource struct {
	Namespace        string `json:"namespace"`
	Name             string `json:"name"`
	UID              string `json:"uid,omitempty"`
	ResourceVersion  string `json:"resourceVersion,omitempty"`
	KubeletConfigKey string `json:"kubeletConfigKey"`
}

// NodePodPreemptionPolicy limits which preemptions the node allows.
type NodePodPreemptionPolicy struct {
	DisableResizePreemption []string `json:"disableResizePreemption,omitempty"`
}

// TaintEffect is what a taint does to pods that do not tolerate it.
type TaintEffect string

// Taint effects.
const (
	TaintEffectNoSchedule       TaintEffect = "NoSchedule"
	TaintEffectPreferNoSchedule TaintEffect = "PreferNoSchedule"
	TaintEffectNoExecute        TaintEffect = "NoExecute"
)

// Taint repels pods that do not tolerate it from a node.
type Taint struct {
	Key       string      `json:"key"`
	Value     string      `json:"value,omitempty"`
	Effect    TaintEffect `json:"effect"`
	TimeAdded *Time       `json:"timeAdded,omitempty"`
}

// NodePhase is the (deprecated) lifecycle phase of a node.
type NodePhase string

// Node phases.
const (
	NodePending    NodePhase = "Pending"
	NodeRunning    NodePhase = "Running"
	NodeTerminated NodePhase = "Terminated"
)

// NodeConditionType is the type of a node condition.
type NodeConditionType string

// Node condition types.
const (
	NodeReady              NodeConditionType = "Ready"
	NodeMemoryPressure     NodeConditionType = "MemoryPressure"
	NodeDiskPressure       NodeConditionType = "DiskPressure"
	NodePIDPressure        NodeConditionType = "PIDPressure"
	NodeNetworkUnavailable NodeConditionType = "NetworkUnavailable"
)

// NodeAddressType is the type of a node address.
type NodeAddressType string

// Node address types.
const (
	NodeHostName    NodeAddressType = "Hostname"
	NodeInternalIP  NodeAddressType = "InternalIP"
	NodeExternalIP  NodeAddressType = "ExternalIP"
	NodeInternalDNS NodeAddressType = "InternalDNS"
	NodeExternalDNS NodeAddressType = "ExternalDNS"
)

// NodeStatus is the observed state of a node, written by its kubelet.
type NodeStatus struct {
	Capacity        ResourceList        `json:"capacity,omitempty"`
	Allocatable     ResourceList        `json:"allocatable,omitempty"`
	Phase           NodePhase           `json:"phase,omitempty"`
	Conditions      []NodeCondition     `json:"conditions,omitempty"`
	Addresses       []NodeAddress       `json:"addresses,omitempty"`
	DaemonEndpoints NodeDaemonEndpoints `json:"daemonEndpoints,omitzero"`
	NodeInfo        NodeSystemInfo      `json:"nodeInfo,omitzero"`
	Images          []ContainerImage    `json:"images,omitempty"`
	VolumesInUse    []string            `json:"volumesInUse,omitempty"`
	VolumesAttached []AttachedVolume    `json:"volumesAttached,omitempty"`
	Config          *NodeConfigStatus   `json:"config,omitempty"`
	// RuntimeHandlers are the container runtime's handlers and what each
	// supports.
	RuntimeHandlers  []NodeRuntimeHandler `json:"runtimeHandlers,omitempty"`
	Features         *NodeFeatures        `json:"features,omitempty"`
	DeclaredFeatures []string             `json:"declaredFeatures,omitempty"`
}

// AttachedVolume is a volume attached to the node.
type AttachedVolume struct {
	Name       string `json:"name"`
	DevicePath string `json:"devicePath"`
}

// NodeConfigStatus is the state of the deprecated dynamic kubelet
// configuration.
type NodeConfigStatus struct {
	Assigned      *NodeConfigSource `json:"assigned,omitempty"`
	Active        *NodeConfigSource `json:"active,omitempty"`
	LastKnownGood *NodeConfigSource `json:"lastKnownGood,omitempty"`
	Error         string            `json:"error,omitempty"`
}

// NodeRuntimeHandler is one handler (runtime class) of the node's
// container runtime.
type NodeRuntimeHandler struct {
	Name     string                      `json:"name"`
	Features *NodeRuntimeHandlerFeatures `json:"features,omitempty"`
}

// NodeRuntimeHandlerFeatures are what a runtime handler supports.
type NodeRuntimeHandlerFeatures struct {
	RecursiveReadOnlyMounts *bool `json:"recursiveReadOnlyMounts,omitempty"`
	UserNamespaces          *bool `json:"userNamespaces,omitempty"`
}

// NodeFeatures are the features the node's kubelet and runtime support.
type NodeFeatures struct {
	SupplementalGroupsPolicy *bool `json:"supplementalGroupsPolicy,omitempty"`
}

// NodeCondition is one condition of a node.
type NodeCondition struct {
	Type               NodeConditionType `json:"type"`
	Status             ConditionStatus   `json:"status"`
	LastHeartbeatTime  Time              `json:"lastHeartbeatTime,omitzero"`
	LastTransitionTime Time              `json:"lastTransitionTime,omitzero"`
	Reason             string            `json:"reason,omitempty"`
	Message            string            `json:"message,omitempty"`
}

// NodeAddress is one address of a node.
type NodeAddress struct {
	Type    NodeAddressType `json:"type"`
	Address string          `json:"address"`
}

// NodeDaemonEndpoints are the ports of daemons on the node.
type NodeDaemonEndpoints struct {
	KubeletEndpoint DaemonEndpoint `json:"kubeletEndpoint,omitzero"`
}

// DaemonEndpoint is a daemon's port. The JSON name is "Port", capitalised,
// as in Kubernetes.
type DaemonEndpoint struct {
	Port int32 `json:"Port"`
}

// NodeSystemInfo describes the node's software.
type NodeSystemInfo struct {
	MachineID               string `json:"machineID"`
	SystemUUID              string `json:"systemUUID"`
	BootID                  string `json:"bootID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	KubeProxyVersion        string `json:"kubeProxyVersion"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
	// Swap is the node's swap; RunningInUserNamespace whether the kubelet
	// runs in a user namespace.
	Swap                   *NodeSwapStatus `json:"swap,omitempty"`
	RunningInUserNamespace *bool           `json:"runningInUserNamespace,omitempty"`
}

// NodeSwapStatus is the node's swap memory.
type NodeSwapStatus struct {
	Capacity *int64 `json:"capacity,omitempty"`
}

// ContainerImage is an image present on the node.
type ContainerImage struct {
	Names     []string `json:"names"`
	SizeBytes int64    `json:"sizeBytes,omitempty"`
}
