package api

import "encoding/json"

// The workload kinds below are served for clients and for the real
// kube-controller-manager and kube-scheduler, which watch them; their
// controllers come later.

// StatefulSet (apps/v1) runs pods with stable identities and storage.
type StatefulSet struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       StatefulSetSpec   `json:"spec,omitzero"`
	Status     StatefulSetStatus `json:"status"` // written even when empty, as kube does
}

// StatefulSetList is a list of StatefulSets.
type StatefulSetList = List[StatefulSet]

// PodManagementPolicyType says whether a StatefulSet's pods start in order.
type PodManagementPolicyType string

// Pod management policies.
const (
	OrderedReadyPodManagement PodManagementPolicyType = "OrderedReady"
	ParallelPodManagement     PodManagementPolicyType = "Parallel"
)

// StatefulSetSpec is the desired state of a StatefulSet.
type StatefulSetSpec struct {
	Replicas                             *int32                                           `json:"replicas,omitempty"`
	Selector                             *LabelSelector                                   `json:"selector"`
	Template                             PodTemplateSpec                                  `json:"template"`
	VolumeClaimTemplates                 []PersistentVolumeClaim                          `json:"volumeClaimTemplates,omitempty"`
	ServiceName                          string                                           `json:"serviceName,omitempty"`
	PodManagementPolicy                  PodManagementPolicyType                          `json:"podManagementPolicy,omitempty"`
	UpdateStrategy                       StatefulSetUpdateStrategy                        `json:"updateStrategy,omitzero"`
	RevisionHistoryLimit                 *int32                                           `json:"revisionHistoryLimit,omitempty"`
	MinReadySeconds                      int32                                            `json:"minReadySeconds,omitempty"`
	PersistentVolumeClaimRetentionPolicy *StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
	Ordinals                             *StatefulSetOrdinals                             `json:"ordinals,omitempty"`
}

// StatefulSetUpdateStrategy is how a StatefulSet replaces its pods.
type StatefulSetUpdateStrategy struct {
	Type          string                            `json:"type,omitempty"`
	RollingUpdate *RollingUpdateStatefulSetStrategy `json:"rollingUpdate,omitempty"`
}

// RollingUpdateStatefulSetStrategy bounds a StatefulSet's rolling update.
type RollingUpdateStatefulSetStrategy struct {
	Partition      *int32       `json:"partition,omitempty"`
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty"`
}

// StatefulSetPersistentVolumeClaimRetentionPolicy says what happens to the
// claims of deleted or scaled-down pods.
type StatefulSetPersistentVolumeClaimRetentionPolicy struct {
	WhenDeleted string `json:"whenDeleted,omitempty"`
	WhenScaled  string `json:"whenScaled,omitempty"`
}

// StatefulSetOrdinals is the first ordinal of a StatefulSet's pods.
type StatefulSetOrdinals struct {
	Start int32 `json:"start"`
}

// StatefulSetStatus is the observed state of a StatefulSet.
type StatefulSetStatus struct {
	ObservedGeneration int64                  `json:"observedGeneration,omitempty"`
	Replicas           int32                  `json:"replicas"`
	ReadyReplicas      int32                  `json:"readyReplicas,omitempty"`
	CurrentReplicas    int32                  `json:"currentReplicas,omitempty"`
	UpdatedReplicas    int32                  `json:"updatedReplicas,omitempty"`
	CurrentRevision    string                 `json:"currentRevision,omitempty"`
	UpdateRevision     string                 `json:"updateRevision,omitempty"`
	CollisionCount     *int32                 `json:"collisionCount,omitempty"`
	Conditions         []StatefulSetCondition `json:"conditions,omitempty"`
	AvailableReplicas  int32                  `json:"availableReplicas"`
}

// StatefulSetCondition is a condition of a StatefulSet.
type StatefulSetCondition workloadCondition

// DaemonSetCondition is a condition of a DaemonSet.
type DaemonSetCondition workloadCondition

// ReplicationControllerCondition is a condition of a ReplicationController.
type ReplicationControllerCondition workloadCondition

// workloadCondition is the shape the workload conditions share.
type workloadCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitzero"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// DaemonSet (apps/v1) runs a pod on every eligible node.
type DaemonSet struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       DaemonSetSpec   `json:"spec,omitzero"`
	Status     DaemonSetStatus `json:"status"` // written even when empty, as kube does
}

// DaemonSetList is a list of DaemonSets.
type DaemonSetList = List[DaemonSet]

// DaemonSetSpec is the desired state of a DaemonSet.
type DaemonSetSpec struct {
	Selector             *LabelSelector          `json:"selector"`
	Template             PodTemplateSpec         `json:"template"`
	UpdateStrategy       DaemonSetUpdateStrategy `json:"updateStrategy,omitzero"`
	MinReadySeconds      int32                   `json:"minReadySeconds,omitempty"`
	RevisionHistoryLimit *int32                  `json:"revisionHistoryLimit,omitempty"`
}

// DaemonSetUpdateStrategy is how a DaemonSet replaces its pods.
type DaemonSetUpdateStrategy struct {
	Type          string                  `json:"type,omitempty"`
	RollingUpdate *RollingUpdateDaemonSet `json:"rollingUpdate,omitempty"`
}

// RollingUpdateDaemonSet bounds a DaemonSet's rolling update.
type RollingUpdateDaemonSet struct {
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty"`
	MaxSurge       *IntOrString `json:"maxSurge,omitempty"`
}

// DaemonSetStatus is the observed state of a DaemonSet.
type DaemonSetStatus struct {
	CurrentNumberScheduled int32                `json:"currentNumberScheduled"`
	NumberMisscheduled     int32                `json:"numberMisscheduled"`
	DesiredNumberScheduled int32                `json:"desiredNumberScheduled"`
	NumberReady            int32                `json:"numberReady"`
	ObservedGeneration     int64                `json:"observedGeneration,omitempty"`
	UpdatedNumberScheduled int32                `json:"updatedNumberScheduled,omitempty"`
	NumberAvailable        int32                `json:"numberAvailable,omitempty"`
	NumberUnavailable      int32                `json:"numberUnavailable,omitempty"`
	CollisionCount         *int32               `json:"collisionCount,omitempty"`
	Conditions             []DaemonSetCondition `json:"conditions,omitempty"`
}

// ControllerRevision (apps/v1) is an immutable snapshot of a StatefulSet's
// or DaemonSet's template.
type ControllerRevision struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	// Data is kept as written (kube's runtime.RawExtension).
	Data     json.RawMessage `json:"data"`
	Revision int64           `json:"revision"`
}

// ControllerRevisionList is a list of ControllerRevisions.
type ControllerRevisionList = List[ControllerRevision]

// ReplicationController (core/v1) is the ancestor of the ReplicaSet: it
// selects its pods by equality on labels.
type ReplicationController struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ReplicationControllerSpec   `json:"spec,omitzero"`
	Status     ReplicationControllerStatus `json:"status"` // written even when empty, as kube does
}

// ReplicationControllerList is a list of ReplicationControllers.
type ReplicationControllerList = List[ReplicationController]

// ReplicationControllerSpec is the desired state of a ReplicationController.
type ReplicationControllerSpec struct {
	Replicas        *int32            `json:"replicas,omitempty"`
	MinReadySeconds int32             `json:"minReadySeconds,omitempty"`
	Selector        map[string]string `json:"selector,omitempty"`
	Template        *PodTemplateSpec  `json:"template,omitempty"`
}

// ReplicationControllerStatus is the observed state of a ReplicationController.
type ReplicationControllerStatus struct {
	Replicas             int32                            `json:"replicas"`
	FullyLabeledReplicas int32                            `json:"fullyLabeledReplicas,omitempty"`
	ReadyReplicas        int32                            `json:"readyReplicas,omitempty"`
	AvailableReplicas    int32                            `json:"availableReplicas,omitempty"`
	ObservedGeneration   int64                            `json:"observedGeneration,omitempty"`
	Conditions           []ReplicationControllerCondition `json:"conditions,omitempty"`
}

// CronJob (batch/v1) creates Jobs on a schedule.
type CronJob struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       CronJobSpec   `json:"spec,omitzero"`
	Status     CronJobStatus `json:"status"` // written even when empty, as kube does
}

// CronJobList is a list of CronJobs.
type CronJobList = List[CronJob]

// ConcurrencyPolicy says what a CronJob does when its previous Job still runs.
type ConcurrencyPolicy string

// Concurrency policies.
const (
	AllowConcurrent   ConcurrencyPolicy = "Allow"
	ForbidConcurrent  ConcurrencyPolicy = "Forbid"
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronJobSpec is the schedule and the Job template.
type CronJobSpec struct {
	Schedule                   string            `json:"schedule"`
	TimeZone                   *string           `json:"timeZone,omitempty"`
	StartingDeadlineSeconds    *int64            `json:"startingDeadlineSeconds,omitempty"`
	ConcurrencyPolicy          ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	Suspend                    *bool             `json:"suspend,omitempty"`
	JobTemplate                JobTemplateSpec   `json:"jobTemplate"`
	SuccessfulJobsHistoryLimit *int32            `json:"successfulJobsHistoryLimit,omitempty"`
	FailedJobsHistoryLimit     *int32            `json:"failedJobsHistoryLimit,omitempty"`
}

// JobTemplateSpec is the Job a CronJob creates.
type JobTemplateSpec struct {
	ObjectMeta `json:"metadata"` // written even when empty, as kube does
	Spec       JobSpec           `json:"spec,omitzero"`
}

// CronJobStatus is the observed state of a CronJob.
type CronJobStatus struct {
	Active             []ObjectReference `json:"active,omitempty"`
	LastScheduleTime   *Time             `json:"lastScheduleTime,omitempty"`
	LastSuccessfulTime *Time             `json:"lastSuccessfulTime,omitempty"`
}

// PodDisruptionBudget (policy/v1) bounds voluntary disruptions of a set of pods.
type PodDisruptionBudget struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PodDisruptionBudgetSpec   `json:"spec,omitzero"`
	Status     PodDisruptionBudgetStatus `json:"status"` // written even when empty, as kube does
}

// PodDisruptionBudgetList is a list of PodDisruptionBudgets.
type PodDisruptionBudgetList = List[PodDisruptionBudget]

// PodDisruptionBudgetSpec is the budget.
type PodDisruptionBudgetSpec struct {
	MinAvailable               *IntOrString   `json:"minAvailable,omitempty"`
	Selector                   *LabelSelector `json:"selector,omitempty"`
	MaxUnavailable             *IntOrString   `json:"maxUnavailable,omitempty"`
	UnhealthyPodEvictionPolicy *string        `json:"unhealthyPodEvictionPolicy,omitempty"`
}

// PodDisruptionBudgetStatus is the disruption controller's accounting.
type PodDisruptionBudgetStatus struct {
	ObservedGeneration int64           `json:"observedGeneration,omitempty"`
	DisruptedPods      map[string]Time `json:"disruptedPods,omitempty"`
	DisruptionsAllowed int32           `json:"disruptionsAllowed"`
	CurrentHealthy     int32           `json:"currentHealthy"`
	DesiredHealthy     int32           `json:"desiredHealthy"`
	ExpectedPods       int32           `json:"expectedPods"`
	Conditions         []Condition     `json:"conditions,omitempty"`
}

// HorizontalPodAutoscaler (autoscaling/v2) scales a workload by metrics.
type HorizontalPodAutoscaler struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       HorizontalPodAutoscalerSpec   `json:"spec,omitzero"`
	Status     HorizontalPodAutoscalerStatus `json:"status"` // written even when empty, as kube does
}

// HorizontalPodAutoscalerList is a list of HorizontalPodAutoscalers.
type HorizontalPodAutoscalerList = List[HorizontalPodAutoscaler]

// HorizontalPodAutoscalerSpec is what to scale, between which bounds, by
// which metrics.
type HorizontalPodAutoscalerSpec struct {
	ScaleTargetRef CrossVersionObjectReference      `json:"scaleTargetRef"`
	MinReplicas    *int32                           `json:"minReplicas,omitempty"`
	MaxReplicas    int32                            `json:"maxReplicas"`
	Metrics        []MetricSpec                     `json:"metrics,omitempty"`
	Behavior       *HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// CrossVersionObjectReference names the scaled object.
type CrossVersionObjectReference struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// MetricSpec is one metric an HPA scales on; the sources are kept as written.
type MetricSpec struct {
	Type              string          `json:"type"`
	Object            json.RawMessage `json:"object,omitempty"`
	Pods              json.RawMessage `json:"pods,omitempty"`
	Resource          json.RawMessage `json:"resource,omitempty"`
	ContainerResource json.RawMessage `json:"containerResource,omitempty"`
	External          json.RawMessage `json:"external,omitempty"`
}

// MetricStatus is the last reading of one metric; the sources are kept as read.
type MetricStatus struct {
	Type              string          `json:"type"`
	Object            json.RawMessage `json:"object,omitempty"`
	Pods              json.RawMessage `json:"pods,omitempty"`
	Resource          json.RawMessage `json:"resource,omitempty"`
	ContainerResource json.RawMessage `json:"containerResource,omitempty"`
	External          json.RawMessage `json:"external,omitempty"`
}

// HorizontalPodAutoscalerStatus is the autoscaler's last observation.
type HorizontalPodAutoscalerStatus struct {
	ObservedGeneration *int64                             `json:"observedGeneration,omitempty"`
	LastScaleTime      *Time                              `json:"lastScaleTime,omitempty"`
	CurrentReplicas    int32                              `json:"currentReplicas,omitempty"`
	DesiredReplicas    int32                              `json:"desiredReplicas"`
	CurrentMetrics     []MetricStatus                     `json:"currentMetrics"`
	Conditions         []HorizontalPodAutoscalerCondition `json:"conditions,omitempty"`
}

// HorizontalPodAutoscalerCondition is one condition of an HPA.
type HorizontalPodAutoscalerCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitzero"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
	ObservedGeneration *int64          `json:"observedGeneration,omitempty"`
}
