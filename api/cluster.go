package api

import "encoding/json"

// Kinds of the core, resource.k8s.io, networking.k8s.io, certificates.k8s.io,
// admissionregistration.k8s.io and storagemigration.k8s.io groups that the
// real kube-scheduler and kube-controller-manager list and watch. minik8s
// serves them (storage, validation of the main fields, tables) so those
// components start; parts no component of minik8s reads are kept as written.

// ServiceAccount (core/v1) is an identity for processes in pods.
type ServiceAccount struct {
	TypeMeta                     `json:",inline"`
	ObjectMeta                   `json:"metadata"`
	Secrets                      []ObjectReference      `json:"secrets,omitempty"`
	ImagePullSecrets             []LocalObjectReference `json:"imagePullSecrets,omitempty"`
	AutomountServiceAccountToken *bool                  `json:"automountServiceAccountToken,omitempty"`
}

// ServiceAccountList is a list of ServiceAccounts.
type ServiceAccountList = List[ServiceAccount]

// ResourceQuota (core/v1) caps the resources a namespace may use.
type ResourceQuota struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ResourceQuotaSpec   `json:"spec,omitzero"`
	Status     ResourceQuotaStatus `json:"status,omitzero"`
}

// ResourceQuotaList is a list of ResourceQuotas.
type ResourceQuotaList = List[ResourceQuota]

// ResourceQuotaSpec is the quota's hard limits and the objects it covers.
type ResourceQuotaSpec struct {
	Hard          ResourceList   `json:"hard,omitempty"`
	Scopes        []string       `json:"scopes,omitempty"`
	ScopeSelector *ScopeSelector `json:"scopeSelector,omitempty"`
}

// ScopeSelector selects the objects a quota covers by scope.
type ScopeSelector struct {
	MatchExpressions []ScopedResourceSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ScopedResourceSelectorRequirement is one scope requirement.
type ScopedResourceSelectorRequirement struct {
	ScopeName string   `json:"scopeName"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values,omitempty"`
}

// ResourceQuotaStatus is the enforced limits and the usage.
type ResourceQuotaStatus struct {
	Hard ResourceList `json:"hard,omitempty"`
	Used ResourceList `json:"used,omitempty"`
}

// PodTemplate (core/v1) is a stored pod template.
type PodTemplate struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Template   PodTemplateSpec `json:"template,omitzero"`
}

// PodTemplateList is a list of PodTemplates.
type PodTemplateList = List[PodTemplate]

// LimitRange (core/v1) bounds and defaults the resources of a namespace's
// pods, containers and claims; the LimitRanger admission plugin applies it.
type LimitRange struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       LimitRangeSpec `json:"spec,omitzero"`
}

// LimitRangeList is a list of LimitRanges.
type LimitRangeList = List[LimitRange]

// LimitRangeSpec is the limits of each kind of object.
type LimitRangeSpec struct {
	Limits []LimitRangeItem `json:"limits"`
}

// LimitType is what a LimitRangeItem limits.
type LimitType string

// Limit types.
const (
	LimitTypePod                   LimitType = "Pod"
	LimitTypeContainer             LimitType = "Container"
	LimitTypePersistentVolumeClaim LimitType = "PersistentVolumeClaim"
)

// LimitRangeItem is the bounds and defaults of one kind of object.
type LimitRangeItem struct {
	Type                 LimitType    `json:"type"`
	Max                  ResourceList `json:"max,omitempty"`
	Min                  ResourceList `json:"min,omitempty"`
	Default              ResourceList `json:"default,omitempty"`
	DefaultRequest       ResourceList `json:"defaultRequest,omitempty"`
	MaxLimitRequestRatio ResourceList `json:"maxLimitRequestRatio,omitempty"`
}

// DeviceClass (resource.k8s.io/v1) is a vendor's class of devices.
type DeviceClass struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       DeviceClassSpec `json:"spec"`
}

// DeviceClassList is a list of DeviceClasses.
type DeviceClassList = List[DeviceClass]

// DeviceClassSpec selects and configures a class's devices.
type DeviceClassSpec struct {
	Selectors            []DeviceSelector           `json:"selectors,omitempty"`
	Config               []DeviceClassConfiguration `json:"config,omitempty"`
	ExtendedResourceName *string                    `json:"extendedResourceName,omitempty"`
}

// DeviceSelector is a CEL expression over devices, kept as written.
type DeviceSelector struct {
	CEL json.RawMessage `json:"cel,omitempty"`
}

// DeviceClassConfiguration is a driver's opaque configuration, kept as written.
type DeviceClassConfiguration struct {
	Opaque json.RawMessage `json:"opaque,omitempty"`
}

// ResourceClaim (resource.k8s.io/v1) asks for devices.
type ResourceClaim struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ResourceClaimSpec   `json:"spec"`
	Status     ResourceClaimStatus `json:"status"` // written even when empty, as kube does
}

// ResourceClaimList is a list of ResourceClaims.
type ResourceClaimList = List[ResourceClaim]

// ResourceClaimSpec is the devices a claim asks for.
type ResourceClaimSpec struct {
	Devices DeviceClaim `json:"devices"`
}

// DeviceClaim lists a claim's requests, constraints and configuration,
// each kept as written.
type DeviceClaim struct {
	Requests    []json.RawMessage `json:"requests"`
	Constraints []json.RawMessage `json:"constraints,omitempty"`
	Config      []json.RawMessage `json:"config,omitempty"`
}

// ResourceClaimStatus is a claim's allocation and its consumers.
type ResourceClaimStatus struct {
	Allocation  *AllocationResult                `json:"allocation,omitempty"`
	ReservedFor []ResourceClaimConsumerReference `json:"reservedFor,omitempty"`
	Devices     []json.RawMessage                `json:"devices,omitempty"`
}

// AllocationResult is the devices allocated to a claim and where they
// are reachable. Devices is written even when empty, as kube does.
type AllocationResult struct {
	Devices             DeviceAllocationResult `json:"devices"`
	NodeSelector        *NodeSelector          `json:"nodeSelector,omitempty"`
	AllocationTimestamp *Time                  `json:"allocationTimestamp,omitempty"`
}

// DeviceAllocationResult is the allocated devices and their
// configuration, each kept as written.
type DeviceAllocationResult struct {
	Results []json.RawMessage `json:"results,omitempty"`
	Config  []json.RawMessage `json:"config,omitempty"`
}

// ResourceClaimConsumerReference names an object (a pod) using a claim.
type ResourceClaimConsumerReference struct {
	APIGroup string `json:"apiGroup,omitempty"`
	Resource string `json:"resource"`
	Name     string `json:"name"`
	UID      UID    `json:"uid"`
}

// ResourceClaimTemplate (resource.k8s.io/v1) is the claim made for each pod
// that refers to it.
type ResourceClaimTemplate struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ResourceClaimTemplateSpec `json:"spec"`
}

// ResourceClaimTemplateList is a list of ResourceClaimTemplates.
type ResourceClaimTemplateList = List[ResourceClaimTemplate]

// ResourceClaimTemplateSpec is the claim to make.
type ResourceClaimTemplateSpec struct {
	ObjectMeta `json:"metadata"` // written even when empty, as kube does
	Spec       ResourceClaimSpec `json:"spec"`
}

// ResourceSlice (resource.k8s.io/v1) publishes devices of a driver's pool.
type ResourceSlice struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ResourceSliceSpec `json:"spec"`
}

// ResourceSliceList is a list of ResourceSlices.
type ResourceSliceList = List[ResourceSlice]

// ResourceSliceSpec is a slice's driver, pool, nodes and devices; the
// devices are kept as written.
type ResourceSliceSpec struct {
	Driver                 string            `json:"driver"`
	Pool                   ResourcePool      `json:"pool"`
	NodeName               *string           `json:"nodeName,omitempty"`
	NodeSelector           *NodeSelector     `json:"nodeSelector,omitempty"`
	AllNodes               *bool             `json:"allNodes,omitempty"`
	Devices                []json.RawMessage `json:"devices,omitempty"`
	PerDeviceNodeSelection *bool             `json:"perDeviceNodeSelection,omitempty"`
	SharedCounters         []json.RawMessage `json:"sharedCounters,omitempty"`
	PartitionTypeAttribute *string           `json:"partitionTypeAttribute,omitempty"`
	SkipNodeOperations     []string          `json:"skipNodeOperations,omitempty"`
}

// ResourcePool identifies a slice's pool and its generation.
type ResourcePool struct {
	Name               string `json:"name"`
	Generation         int64  `json:"generation"`
	ResourceSliceCount int64  `json:"resourceSliceCount"`
}

// DeviceTaintRule (resource.k8s.io/v1) taints the devices it selects.
type DeviceTaintRule struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       DeviceTaintRuleSpec   `json:"spec"`
	Status     DeviceTaintRuleStatus `json:"status,omitzero"`
}

// DeviceTaintRuleList is a list of DeviceTaintRules.
type DeviceTaintRuleList = List[DeviceTaintRule]

// DeviceTaintRuleSpec is the selector (kept as written) and the taint.
type DeviceTaintRuleSpec struct {
	DeviceSelector json.RawMessage `json:"deviceSelector,omitempty"`
	Taint          DeviceTaint     `json:"taint"`
}

// DeviceTaint is a taint on devices.
type DeviceTaint struct {
	Key       string `json:"key"`
	Value     string `json:"value,omitempty"`
	Effect    string `json:"effect"`
	TimeAdded *Time  `json:"timeAdded,omitempty"`
}

// DeviceTaintRuleStatus is the rule's conditions.
type DeviceTaintRuleStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

// ServiceCIDR (networking.k8s.io/v1) is a range Service ClusterIPs come from.
type ServiceCIDR struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ServiceCIDRSpec   `json:"spec,omitzero"`
	Status     ServiceCIDRStatus `json:"status,omitzero"`
}

// ServiceCIDRList is a list of ServiceCIDRs.
type ServiceCIDRList = List[ServiceCIDR]

// ServiceCIDRSpec holds up to one range per IP family.
type ServiceCIDRSpec struct {
	CIDRs []string `json:"cidrs,omitempty"`
}

// ServiceCIDRStatus is the range's conditions.
type ServiceCIDRStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

// IPAddress (networking.k8s.io/v1) records one allocated Service IP.
type IPAddress struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       IPAddressSpec `json:"spec,omitzero"`
}

// IPAddressList is a list of IPAddresses.
type IPAddressList = List[IPAddress]

// IPAddressSpec names the object the address is allocated to.
type IPAddressSpec struct {
	ParentRef *ParentReference `json:"parentRef,omitempty"`
}

// ParentReference names an object by group, resource, namespace and name.
type ParentReference struct {
	Group     string `json:"group,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// PodCertificateRequest (certificates.k8s.io/v1) asks a signer for a
// certificate for a pod.
type PodCertificateRequest struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PodCertificateRequestSpec   `json:"spec"`
	Status     PodCertificateRequestStatus `json:"status"`
}

// PodCertificateRequestList is a list of PodCertificateRequests.
type PodCertificateRequestList = List[PodCertificateRequest]

// PodCertificateRequestSpec is the pod, its identities and the key to certify.
type PodCertificateRequestSpec struct {
	SignerName                string            `json:"signerName"`
	PodName                   string            `json:"podName"`
	PodUID                    UID               `json:"podUID"`
	ServiceAccountName        string            `json:"serviceAccountName"`
	ServiceAccountUID         UID               `json:"serviceAccountUID"`
	NodeName                  string            `json:"nodeName"`
	NodeUID                   UID               `json:"nodeUID"`
	MaxExpirationSeconds      *int32            `json:"maxExpirationSeconds,omitempty"`
	StubPKCS10Request         []byte            `json:"stubPKCS10Request"`
	UnverifiedUserAnnotations map[string]string `json:"unverifiedUserAnnotations,omitempty"`
}

// PodCertificateRequestStatus is the signer's answer.
type PodCertificateRequestStatus struct {
	Conditions       []Condition `json:"conditions,omitempty"`
	CertificateChain string      `json:"certificateChain,omitempty"`
	NotBefore        *Time       `json:"notBefore,omitempty"`
	BeginRefreshAt   *Time       `json:"beginRefreshAt,omitempty"`
	NotAfter         *Time       `json:"notAfter,omitempty"`
}

// StorageVersionMigration (storagemigration.k8s.io/v1) asks for every
// object of a resource to be rewritten in storage.
type StorageVersionMigration struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       StorageVersionMigrationSpec   `json:"spec,omitzero"`
	Status     StorageVersionMigrationStatus `json:"status"` // written even when empty, as kube does
}

// StorageVersionMigrationList is a list of StorageVersionMigrations.
type StorageVersionMigrationList = List[StorageVersionMigration]

// StorageVersionMigrationSpec names the resource to migrate.
type StorageVersionMigrationSpec struct {
	Resource GroupResource `json:"resource"`
}

// GroupResource is a resource of a group.
type GroupResource struct {
	Group    string `json:"group"`
	Resource string `json:"resource"`
}

// StorageVersionMigrationStatus is the migration's progress.
type StorageVersionMigrationStatus struct {
	Conditions      []Condition `json:"conditions,omitempty"`
	ResourceVersion string      `json:"resourceVersion,omitempty"`
}
