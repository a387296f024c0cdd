package api

import (
	"encoding/json"

	"github.com/minik8s/minik8s/api/resource"
)

// PersistentVolume (core/v1) is a piece of storage in the cluster, bound
// to claims by the controller-manager's persistentvolume-binder.
type PersistentVolume struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PersistentVolumeSpec   `json:"spec,omitzero"`
	Status     PersistentVolumeStatus `json:"status,omitzero"`
}

// PersistentVolumeList is a list of PersistentVolumes.
type PersistentVolumeList = List[PersistentVolume]

// PersistentVolumeAccessMode is how a volume can be mounted.
type PersistentVolumeAccessMode string

// Access modes.
const (
	ReadWriteOnce    PersistentVolumeAccessMode = "ReadWriteOnce"
	ReadOnlyMany     PersistentVolumeAccessMode = "ReadOnlyMany"
	ReadWriteMany    PersistentVolumeAccessMode = "ReadWriteMany"
	ReadWriteOncePod PersistentVolumeAccessMode = "ReadWriteOncePod"
)

// PersistentVolumeReclaimPolicy is what happens to a released volume.
type PersistentVolumeReclaimPolicy string

// Reclaim policies.
const (
	PersistentVolumeReclaimRecycle PersistentVolumeReclaimPolicy = "Recycle"
	PersistentVolumeReclaimDelete  PersistentVolumeReclaimPolicy = "Delete"
	PersistentVolumeReclaimRetain  PersistentVolumeReclaimPolicy = "Retain"
)

// PersistentVolumeMode is Filesystem or Block.
type PersistentVolumeMode string

// Volume modes.
const (
	PersistentVolumeBlock      PersistentVolumeMode = "Block"
	PersistentVolumeFilesystem PersistentVolumeMode = "Filesystem"
)

// PersistentVolumeSpec is the specification of a persistent volume. The
// volume sources other than hostPath are kept as they were written.
type PersistentVolumeSpec struct {
	Capacity ResourceList `json:"capacity,omitempty"`
	PersistentVolumeSource
	AccessModes                   []PersistentVolumeAccessMode  `json:"accessModes,omitempty"`
	ClaimRef                      *ObjectReference              `json:"claimRef,omitempty"`
	PersistentVolumeReclaimPolicy PersistentVolumeReclaimPolicy `json:"persistentVolumeReclaimPolicy,omitempty"`
	StorageClassName              string                        `json:"storageClassName,omitempty"`
	MountOptions                  []string                      `json:"mountOptions,omitempty"`
	VolumeMode                    *PersistentVolumeMode         `json:"volumeMode,omitempty"`
	NodeAffinity                  *VolumeNodeAffinity           `json:"nodeAffinity,omitempty"`
	VolumeAttributesClassName     *string                       `json:"volumeAttributesClassName,omitempty"`
}

// PersistentVolumeSource is the storage behind a persistent volume: exactly
// one member is set.
type PersistentVolumeSource struct {
	GCEPersistentDisk    json.RawMessage       `json:"gcePersistentDisk,omitempty"`
	AWSElasticBlockStore json.RawMessage       `json:"awsElasticBlockStore,omitempty"`
	HostPath             *HostPathVolumeSource `json:"hostPath,omitempty"`
	Glusterfs            json.RawMessage       `json:"glusterfs,omitempty"`
	NFS                  json.RawMessage       `json:"nfs,omitempty"`
	RBD                  json.RawMessage       `json:"rbd,omitempty"`
	ISCSI                json.RawMessage       `json:"iscsi,omitempty"`
	Cinder               json.RawMessage       `json:"cinder,omitempty"`
	CephFS               json.RawMessage       `json:"cephfs,omitempty"`
	FC                   json.RawMessage       `json:"fc,omitempty"`
	Flocker              json.RawMessage       `json:"flocker,omitempty"`
	FlexVolume           json.RawMessage       `json:"flexVolume,omitempty"`
	AzureFile            json.RawMessage       `json:"azureFile,omitempty"`
	VsphereVolume        json.RawMessage       `json:"vsphereVolume,omitempty"`
	Quobyte              json.RawMessage       `json:"quobyte,omitempty"`
	AzureDisk            json.RawMessage       `json:"azureDisk,omitempty"`
	PhotonPersistentDisk json.RawMessage       `json:"photonPersistentDisk,omitempty"`
	PortworxVolume       json.RawMessage       `json:"portworxVolume,omitempty"`
	ScaleIO              json.RawMessage       `json:"scaleIO,omitempty"`
	Local                *LocalVolumeSource    `json:"local,omitempty"`
	StorageOS            json.RawMessage       `json:"storageos,omitempty"`
	CSI                  json.RawMessage       `json:"csi,omitempty"`
}

// LocalVolumeSource is a local disk of the node the volume's node affinity names.
type LocalVolumeSource struct {
	Path   string  `json:"path"`
	FSType *string `json:"fsType,omitempty"`
}

// VolumeNodeAffinity restricts the nodes a volume can be used from.
type VolumeNodeAffinity struct {
	Required *NodeSelector `json:"required,omitempty"`
}

// PersistentVolumePhase is the lifecycle phase of a volume.
type PersistentVolumePhase string

// Volume phases.
const (
	VolumePending   PersistentVolumePhase = "Pending"
	VolumeAvailable PersistentVolumePhase = "Available"
	VolumeBound     PersistentVolumePhase = "Bound"
	VolumeReleased  PersistentVolumePhase = "Released"
	VolumeFailed    PersistentVolumePhase = "Failed"
)

// PersistentVolumeStatus is the observed state of a volume.
type PersistentVolumeStatus struct {
	Phase                   PersistentVolumePhase `json:"phase,omitempty"`
	Message                 string                `json:"message,omitempty"`
	Reason                  string                `json:"reason,omitempty"`
	LastPhaseTransitionTime *Time                 `json:"lastPhaseTransitionTime,omitempty"`
}

// PersistentVolumeClaim (core/v1) is a user's request for storage.
type PersistentVolumeClaim struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PersistentVolumeClaimSpec   `json:"spec,omitzero"`
	Status     PersistentVolumeClaimStatus `json:"status,omitzero"`
}

// PersistentVolumeClaimList is a list of PersistentVolumeClaims.
type PersistentVolumeClaimList = List[PersistentVolumeClaim]

// PersistentVolumeClaimSpec is what a claim asks for.
type PersistentVolumeClaimSpec struct {
	AccessModes               []PersistentVolumeAccessMode `json:"accessModes,omitempty"`
	Selector                  *LabelSelector               `json:"selector,omitempty"`
	Resources                 VolumeResourceRequirements   `json:"resources,omitzero"`
	VolumeName                string                       `json:"volumeName,omitempty"`
	StorageClassName          *string                      `json:"storageClassName,omitempty"`
	VolumeMode                *PersistentVolumeMode        `json:"volumeMode,omitempty"`
	DataSource                *TypedLocalObjectReference   `json:"dataSource,omitempty"`
	DataSourceRef             *TypedObjectReference        `json:"dataSourceRef,omitempty"`
	VolumeAttributesClassName *string                      `json:"volumeAttributesClassName,omitempty"`
}

// VolumeResourceRequirements is the storage a claim requests.
type VolumeResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

// TypedLocalObjectReference names an object of a kind in the same namespace.
type TypedLocalObjectReference struct {
	APIGroup *string `json:"apiGroup"`
	Kind     string  `json:"kind"`
	Name     string  `json:"name"`
}

// TypedObjectReference names an object of a kind, possibly in another namespace.
type TypedObjectReference struct {
	APIGroup  *string `json:"apiGroup"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Namespace *string `json:"namespace,omitempty"`
}

// PersistentVolumeClaimPhase is the lifecycle phase of a claim.
type PersistentVolumeClaimPhase string

// Claim phases.
const (
	ClaimPending PersistentVolumeClaimPhase = "Pending"
	ClaimBound   PersistentVolumeClaimPhase = "Bound"
	ClaimLost    PersistentVolumeClaimPhase = "Lost"
)

// PersistentVolumeClaimStatus is the observed state of a claim.
type PersistentVolumeClaimStatus struct {
	Phase                            PersistentVolumeClaimPhase       `json:"phase,omitempty"`
	AccessModes                      []PersistentVolumeAccessMode     `json:"accessModes,omitempty"`
	Capacity                         ResourceList                     `json:"capacity,omitempty"`
	Conditions                       []PersistentVolumeClaimCondition `json:"conditions,omitempty"`
	AllocatedResources               ResourceList                     `json:"allocatedResources,omitempty"`
	AllocatedResourceStatuses        map[ResourceName]string          `json:"allocatedResourceStatuses,omitempty"`
	CurrentVolumeAttributesClassName *string                          `json:"currentVolumeAttributesClassName,omitempty"`
	ModifyVolumeStatus               *ModifyVolumeStatus              `json:"modifyVolumeStatus,omitempty"`
	HealthStatus                     json.RawMessage                  `json:"healthStatus,omitempty"`
}

// PersistentVolumeClaimCondition is one condition of a claim.
type PersistentVolumeClaimCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastProbeTime      Time            `json:"lastProbeTime,omitzero"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitzero"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// ModifyVolumeStatus is the state of a claim's volume attributes change.
type ModifyVolumeStatus struct {
	TargetVolumeAttributesClassName string `json:"targetVolumeAttributesClassName,omitempty"`
	Status                          string `json:"status"`
}

// StorageClass (storage.k8s.io/v1) describes a class of dynamically
// provisioned storage.
type StorageClass struct {
	TypeMeta             `json:",inline"`
	ObjectMeta           `json:"metadata"`
	Provisioner          string                         `json:"provisioner"`
	Parameters           map[string]string              `json:"parameters,omitempty"`
	ReclaimPolicy        *PersistentVolumeReclaimPolicy `json:"reclaimPolicy,omitempty"`
	MountOptions         []string                       `json:"mountOptions,omitempty"`
	AllowVolumeExpansion *bool                          `json:"allowVolumeExpansion,omitempty"`
	VolumeBindingMode    *VolumeBindingMode             `json:"volumeBindingMode,omitempty"`
	AllowedTopologies    []TopologySelectorTerm         `json:"allowedTopologies,omitempty"`
}

// StorageClassList is a list of StorageClasses.
type StorageClassList = List[StorageClass]

// VolumeBindingMode is when a class's volumes are bound and provisioned.
type VolumeBindingMode string

// Volume binding modes.
const (
	VolumeBindingImmediate            VolumeBindingMode = "Immediate"
	VolumeBindingWaitForFirstConsumer VolumeBindingMode = "WaitForFirstConsumer"
)

// IsDefaultStorageClassAnnotation marks the cluster's default class.
const IsDefaultStorageClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// The default-class mark's beta spelling, still honoured, and the
// protection finalizers of the StorageObjectInUseProtection admission
// plugin and the protection controllers (the binding protocol's
// annotations are in internal/storagevolume).
const (
	BetaIsDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
	// PVCProtectionFinalizer holds a claim used by a pod.
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	// PVProtectionFinalizer holds a volume bound to a claim.
	PVProtectionFinalizer = "kubernetes.io/pv-protection"
	// VACProtectionFinalizer holds a VolumeAttributesClass in use.
	VACProtectionFinalizer = "kubernetes.io/vac-protection"
)

// TopologySelectorTerm is a set of label requirements on topology.
type TopologySelectorTerm struct {
	MatchLabelExpressions []TopologySelectorLabelRequirement `json:"matchLabelExpressions,omitempty"`
}

// TopologySelectorLabelRequirement matches a label against values.
type TopologySelectorLabelRequirement struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// CSINode (storage.k8s.io/v1) lists the CSI drivers installed on a node.
type CSINode struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       CSINodeSpec   `json:"spec"`
	Status     CSINodeStatus `json:"status,omitzero"`
}

// CSINodeList is a list of CSINodes.
type CSINodeList = List[CSINode]

// CSINodeSpec holds a node's drivers.
type CSINodeSpec struct {
	Drivers []CSINodeDriver `json:"drivers"`
}

// CSINodeDriver is one CSI driver on a node.
type CSINodeDriver struct {
	Name         string               `json:"name"`
	NodeID       string               `json:"nodeID"`
	TopologyKeys []string             `json:"topologyKeys"`
	Allocatable  *VolumeNodeResources `json:"allocatable,omitempty"`
}

// VolumeNodeResources is how many volumes of a driver a node can hold.
type VolumeNodeResources struct {
	Count *int32 `json:"count,omitempty"`
}

// CSINodeStatus is the storage health a node reports.
type CSINodeStatus struct {
	StorageHealth []json.RawMessage `json:"storageHealth,omitempty"`
}

// CSIDriver (storage.k8s.io/v1) describes a CSI volume driver.
type CSIDriver struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       CSIDriverSpec `json:"spec"`
}

// CSIDriverList is a list of CSIDrivers.
type CSIDriverList = List[CSIDriver]

// CSIDriverSpec is what the cluster must know of a CSI driver.
type CSIDriverSpec struct {
	AttachRequired                     *bool             `json:"attachRequired,omitempty"`
	PodInfoOnMount                     *bool             `json:"podInfoOnMount,omitempty"`
	VolumeLifecycleModes               []string          `json:"volumeLifecycleModes,omitempty"`
	StorageCapacity                    *bool             `json:"storageCapacity,omitempty"`
	FSGroupPolicy                      *string           `json:"fsGroupPolicy,omitempty"`
	TokenRequests                      []CSITokenRequest `json:"tokenRequests,omitempty"`
	RequiresRepublish                  *bool             `json:"requiresRepublish,omitempty"`
	SELinuxMount                       *bool             `json:"seLinuxMount,omitempty"`
	NodeAllocatableUpdatePeriodSeconds *int64            `json:"nodeAllocatableUpdatePeriodSeconds,omitempty"`
	ServiceAccountTokenInSecrets       *bool             `json:"serviceAccountTokenInSecrets,omitempty"`
	PreventPodSchedulingIfMissing      *bool             `json:"preventPodSchedulingIfMissing,omitempty"`
}

// CSITokenRequest is a service account token a CSI driver receives.
type CSITokenRequest struct {
	Audience          string `json:"audience"`
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
}

// CSIStorageCapacity (storage.k8s.io/v1) is the storage a class has left
// in a topology segment.
type CSIStorageCapacity struct {
	TypeMeta          `json:",inline"`
	ObjectMeta        `json:"metadata"`
	NodeTopology      *LabelSelector     `json:"nodeTopology,omitempty"`
	StorageClassName  string             `json:"storageClassName"`
	Capacity          *resource.Quantity `json:"capacity,omitempty"`
	MaximumVolumeSize *resource.Quantity `json:"maximumVolumeSize,omitempty"`
}

// CSIStorageCapacityList is a list of CSIStorageCapacities.
type CSIStorageCapacityList = List[CSIStorageCapacity]

// VolumeAttachment (storage.k8s.io/v1) asks for a volume to be attached to a node.
type VolumeAttachment struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       VolumeAttachmentSpec   `json:"spec"`
	Status     VolumeAttachmentStatus `json:"status,omitzero"`
}

// VolumeAttachmentList is a list of VolumeAttachments.
type VolumeAttachmentList = List[VolumeAttachment]

// VolumeAttachmentSpec is the attachment asked for.
type VolumeAttachmentSpec struct {
	Attacher string                 `json:"attacher"`
	Source   VolumeAttachmentSource `json:"source"`
	NodeName string                 `json:"nodeName"`
}

// VolumeAttachmentSource is the volume to attach: a PersistentVolume's name
// or an inline volume's spec.
type VolumeAttachmentSource struct {
	PersistentVolumeName *string         `json:"persistentVolumeName,omitempty"`
	InlineVolumeSpec     json.RawMessage `json:"inlineVolumeSpec,omitempty"`
}

// VolumeAttachmentStatus is the attacher's report.
type VolumeAttachmentStatus struct {
	Attached           bool              `json:"attached"`
	AttachmentMetadata map[string]string `json:"attachmentMetadata,omitempty"`
	AttachError        *VolumeError      `json:"attachError,omitempty"`
	DetachError        *VolumeError      `json:"detachError,omitempty"`
}

// VolumeError is an attach or detach failure.
type VolumeError struct {
	Time      Time   `json:"time,omitzero"`
	Message   string `json:"message,omitempty"`
	ErrorCode *int32 `json:"errorCode,omitempty"`
}

// VolumeAttributesClass (storage.k8s.io/v1) is a set of mutable volume
// attributes a CSI driver applies.
type VolumeAttributesClass struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	DriverName string            `json:"driverName"`
	Parameters map[string]string `json:"parameters,omitempty"`
}

// VolumeAttributesClassList is a list of VolumeAttributesClasses.
type VolumeAttributesClassList = List[VolumeAttributesClass]
