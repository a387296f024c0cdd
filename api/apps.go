package api

// Deployment (apps/v1) declares a replicated, rolling-updated set of pods,
// realised through ReplicaSets.
type Deployment struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       DeploymentSpec   `json:"spec,omitzero"`
	Status     DeploymentStatus `json:"status"` // written even when empty, as kube does
}

// DeploymentList is a list of Deployments.
type DeploymentList = List[Deployment]

// DeploymentSpec is the desired state of a deployment.
type DeploymentSpec struct {
	Replicas                *int32             `json:"replicas,omitempty"`
	Selector                *LabelSelector     `json:"selector"`
	Template                PodTemplateSpec    `json:"template"`
	Strategy                DeploymentStrategy `json:"strategy,omitzero"`
	MinReadySeconds         int32              `json:"minReadySeconds,omitempty"`
	RevisionHistoryLimit    *int32             `json:"revisionHistoryLimit,omitempty"`
	Paused                  bool               `json:"paused,omitempty"`
	ProgressDeadlineSeconds *int32             `json:"progressDeadlineSeconds,omitempty"`
}

// DeploymentStrategyType is how a deployment replaces pods.
type DeploymentStrategyType string

// Deployment strategies.
const (
	RecreateDeploymentStrategyType      DeploymentStrategyType = "Recreate"
	RollingUpdateDeploymentStrategyType DeploymentStrategyType = "RollingUpdate"
)

// Annotations and labels the deployment controller uses.
const (
	// DefaultDeploymentUniqueLabelKey labels a ReplicaSet's pods with the
	// hash of its template so sibling ReplicaSets never share pods.
	DefaultDeploymentUniqueLabelKey = "pod-template-hash"
	RevisionAnnotation              = "deployment.kubernetes.io/revision"
	RevisionHistoryAnnotation       = "deployment.kubernetes.io/revision-history"
	DesiredReplicasAnnotation       = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation           = "deployment.kubernetes.io/max-replicas"
	ChangeCauseAnnotation           = "kubernetes.io/change-cause"
	// DeprecatedRollbackToAnnotation is the rollback request of the
	// extensions/v1beta1 API; a Deployment never copies it to its ReplicaSets.
	DeprecatedRollbackToAnnotation = "deprecated.deployment.rollback.to"
)

// Reasons of the deployment conditions, as Kubernetes spells them; clients
// read them too (kubectl rollout status stops at TimedOutReason).
const (
	ReplicaSetUpdatedReason    = "ReplicaSetUpdated"
	FailedRSCreateReason       = "ReplicaSetCreateError"
	NewReplicaSetReason        = "NewReplicaSetCreated"
	FoundNewRSReason           = "FoundNewReplicaSet"
	NewRSAvailableReason       = "NewReplicaSetAvailable"
	TimedOutReason             = "ProgressDeadlineExceeded"
	PausedDeployReason         = "DeploymentPaused"
	ResumedDeployReason        = "DeploymentResumed"
	MinimumReplicasAvailable   = "MinimumReplicasAvailable"
	MinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

// DeploymentStrategy is the replacement strategy of a deployment.
type DeploymentStrategy struct {
	Type          DeploymentStrategyType   `json:"type,omitempty"`
	RollingUpdate *RollingUpdateDeployment `json:"rollingUpdate,omitempty"`
}

// RollingUpdateDeployment bounds a rolling update: pods below (maxUnavailable)
// and above (maxSurge) the desired count, as numbers or percentages.
type RollingUpdateDeployment struct {
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty"`
	MaxSurge       *IntOrString `json:"maxSurge,omitempty"`
}

// DeploymentStatus is the observed state of a deployment.
type DeploymentStatus struct {
	ObservedGeneration  int64                 `json:"observedGeneration,omitempty"`
	Replicas            int32                 `json:"replicas,omitempty"`
	UpdatedReplicas     int32                 `json:"updatedReplicas,omitempty"`
	ReadyReplicas       int32                 `json:"readyReplicas,omitempty"`
	AvailableReplicas   int32                 `json:"availableReplicas,omitempty"`
	UnavailableReplicas int32                 `json:"unavailableReplicas,omitempty"`
	TerminatingReplicas *int32                `json:"terminatingReplicas,omitempty"`
	Conditions          []DeploymentCondition `json:"conditions,omitempty"`
	CollisionCount      *int32                `json:"collisionCount,omitempty"`
}

// DeploymentConditionType is the type of a deployment condition.
type DeploymentConditionType string

// Deployment condition types.
const (
	DeploymentAvailable      DeploymentConditionType = "Available"
	DeploymentProgressing    DeploymentConditionType = "Progressing"
	DeploymentReplicaFailure DeploymentConditionType = "ReplicaFailure"
)

// DeploymentCondition is one condition of a deployment.
type DeploymentCondition struct {
	Type               DeploymentConditionType `json:"type"`
	Status             ConditionStatus         `json:"status"`
	LastUpdateTime     Time                    `json:"lastUpdateTime,omitzero"`
	LastTransitionTime Time                    `json:"lastTransitionTime,omitzero"`
	Reason             string                  `json:"reason,omitempty"`
	Message            string                  `json:"message,omitempty"`
}

// ReplicaSet (apps/v1) keeps a number of identical pods running.
type ReplicaSet struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ReplicaSetSpec   `json:"spec,omitzero"`
	Status     ReplicaSetStatus `json:"status"` // written even when empty, as kube does
}

// ReplicaSetList is a list of ReplicaSets.
type ReplicaSetList = List[ReplicaSet]

// ReplicaSetSpec is the desired state of a replica set.
type ReplicaSetSpec struct {
	Replicas        *int32          `json:"replicas,omitempty"`
	MinReadySeconds int32           `json:"minReadySeconds,omitempty"`
	Selector        *LabelSelector  `json:"selector"`
	Template        PodTemplateSpec `json:"template,omitzero"`
}

// ReplicaSetStatus is the observed state of a replica set.
type ReplicaSetStatus struct {
	Replicas             int32                 `json:"replicas"`
	FullyLabeledReplicas int32                 `json:"fullyLabeledReplicas,omitempty"`
	ReadyReplicas        int32                 `json:"readyReplicas,omitempty"`
	AvailableReplicas    int32                 `json:"availableReplicas,omitempty"`
	TerminatingReplicas  *int32                `json:"terminatingReplicas,omitempty"`
	ObservedGeneration   int64                 `json:"observedGeneration,omitempty"`
	Conditions           []ReplicaSetCondition `json:"conditions,omitempty"`
}

// ReplicaSetConditionType is the type of a replica set condition.
type ReplicaSetConditionType string

// ReplicaSetReplicaFailure is set when pods cannot be created or deleted.
const ReplicaSetReplicaFailure ReplicaSetConditionType = "ReplicaFailure"

// ReplicaSetCondition is one condition of a replica set.
type ReplicaSetCondition struct {
	Type               ReplicaSetConditionType `json:"type"`
	Status             ConditionStatus         `json:"status"`
	LastTransitionTime Time                    `json:"lastTransitionTime,omitzero"`
	Reason             string                  `json:"reason,omitempty"`
	Message            string                  `json:"message,omitempty"`
}

// Scale (autoscaling/v1) is the body of the scale subresource of
// deployments and replica sets; it is not a stored resource.
type Scale struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ScaleSpec   `json:"spec,omitzero"`
	Status     ScaleStatus `json:"status,omitzero"`
}

// ScaleAPIVersion is the apiVersion of Scale bodies.
const ScaleAPIVersion = "autoscaling/v1"

// ScaleSpec is the desired replica count.
type ScaleSpec struct {
	Replicas int32 `json:"replicas,omitempty"`
}

// ScaleStatus is the observed replica count and the selector, in string
// form ("app=web"), of the scaled pods.
type ScaleStatus struct {
	Replicas int32  `json:"replicas"`
	Selector string `json:"selector,omitempty"`
}
