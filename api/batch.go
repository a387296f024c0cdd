package api

// Job (batch/v1) runs pods until a number of them complete.
type Job struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       JobSpec   `json:"spec,omitzero"`
	Status     JobStatus `json:"status"` // written even when empty, as kube does
}

// JobList is a list of Jobs.
type JobList = List[Job]

// Labels the apiserver puts on a job's pod template when it generates the
// job's selector (manualSelector unset): the new batch.kubernetes.io names
// and the legacy ones.
const (
	JobControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	JobNameLabel                = "batch.kubernetes.io/job-name"
	LegacyJobControllerUIDLabel = "controller-uid"
	LegacyJobNameLabel          = "job-name"
	// JobCompletionIndexAnnotation carries the index of an Indexed job's pod.
	JobCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// JobIndexFailureCountAnnotation and JobIndexIgnoredFailureCountAnnotation
	// carry, on a pod of a job with backoffLimitPerIndex, how many earlier
	// pods of its index failed (counted / ignored by the pod failure policy).
	JobIndexFailureCountAnnotation        = "batch.kubernetes.io/job-index-failure-count"
	JobIndexIgnoredFailureCountAnnotation = "batch.kubernetes.io/job-index-ignored-failure-count"
	// JobTrackingFinalizer holds a job's pod until the job controller has
	// counted it in the job's status.
	JobTrackingFinalizer = "batch.kubernetes.io/job-tracking"
)

// CompletionMode says how a job's completions are counted.
type CompletionMode string

// Completion modes.
const (
	NonIndexedCompletion CompletionMode = "NonIndexed"
	IndexedCompletion    CompletionMode = "Indexed"
)

// JobSpec is the desired state of a job.
type JobSpec struct {
	Parallelism           *int32 `json:"parallelism,omitempty"`
	Completions           *int32 `json:"completions,omitempty"`
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// PodFailurePolicy is kept and validated for shape only.
	PodFailurePolicy        *PodFailurePolicy `json:"podFailurePolicy,omitempty"`
	BackoffLimit            *int32            `json:"backoffLimit,omitempty"`
	BackoffLimitPerIndex    *int32            `json:"backoffLimitPerIndex,omitempty"`
	MaxFailedIndexes        *int32            `json:"maxFailedIndexes,omitempty"`
	Selector                *LabelSelector    `json:"selector,omitempty"`
	ManualSelector          *bool             `json:"manualSelector,omitempty"`
	Template                PodTemplateSpec   `json:"template"`
	TTLSecondsAfterFinished *int32            `json:"ttlSecondsAfterFinished,omitempty"`
	CompletionMode          *CompletionMode   `json:"completionMode,omitempty"`
	Suspend                 *bool             `json:"suspend,omitempty"`
	PodReplacementPolicy    *string           `json:"podReplacementPolicy,omitempty"`
	ManagedBy               *string           `json:"managedBy,omitempty"`

	// SuccessPolicy lets an Indexed job succeed before every index did.
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`
	// Scheduling is the workload-aware (gang) scheduling of the job's pods
	// as one pod group; kept, not acted on.
	Scheduling *JobSchedulingConfiguration `json:"scheduling,omitempty"`
}

// JobSchedulingConfiguration is how a job's pods are scheduled as a group
// (scheduling.k8s.io/v1alpha3 types, as kube's batch/v1 uses them).
type JobSchedulingConfiguration struct {
	SchedulingPolicy      *WorkloadPodGroupSchedulingPolicy      `json:"schedulingPolicy,omitempty"`
	SchedulingConstraints *WorkloadPodGroupSchedulingConstraints `json:"schedulingConstraints,omitempty"`
	DisruptionMode        *WorkloadPodGroupDisruptionMode        `json:"disruptionMode,omitempty"`
	ResourceClaims        []WorkloadPodGroupResourceClaim        `json:"resourceClaims,omitempty"`
}

// WorkloadPodGroupSchedulingPolicy is basic or gang scheduling.
type WorkloadPodGroupSchedulingPolicy struct {
	Basic *WorkloadPodGroupBasicSchedulingPolicy `json:"basic,omitempty"`
	Gang  *WorkloadPodGroupGangSchedulingPolicy  `json:"gang,omitempty"`
}

// WorkloadPodGroupBasicSchedulingPolicy schedules pods one by one.
type WorkloadPodGroupBasicSchedulingPolicy struct{}

// WorkloadPodGroupGangSchedulingPolicy schedules minCount pods or none.
type WorkloadPodGroupGangSchedulingPolicy struct {
	MinCount *int32 `json:"minCount,omitempty"`
}

// WorkloadPodGroupSchedulingConstraints are placement constraints of the
// group.
type WorkloadPodGroupSchedulingConstraints struct {
	Topology []WorkloadTopologyConstraint `json:"topology,omitempty"`
}

// WorkloadTopologyConstraint places the whole group in one domain of a
// node label (kube's scheduling.k8s.io TopologyConstraint).
type WorkloadTopologyConstraint struct {
	Key string `json:"key"`
}

// WorkloadPodGroupDisruptionMode says whether the group's pods are
// disrupted one at a time or all together.
type WorkloadPodGroupDisruptionMode struct {
	Single *WorkloadPodGroupSingleDisruptionMode `json:"single,omitempty"`
	All    *WorkloadPodGroupAllDisruptionMode    `json:"all,omitempty"`
}

// WorkloadPodGroupSingleDisruptionMode disrupts pods one at a time.
type WorkloadPodGroupSingleDisruptionMode struct{}

// WorkloadPodGroupAllDisruptionMode disrupts the whole group together.
type WorkloadPodGroupAllDisruptionMode struct{}

// WorkloadPodGroupResourceClaim is a resource claim shared by the group.
type WorkloadPodGroupResourceClaim struct {
	Name                      string  `json:"name"`
	ResourceClaimName         *string `json:"resourceClaimName,omitempty"`
	ResourceClaimTemplateName *string `json:"resourceClaimTemplateName,omitempty"`
}

// SuccessPolicy declares an Indexed job succeeded once one of its rules
// is met (kube's JobSuccessPolicy, GA in v1.33): the job gets the
// SuccessCriteriaMet condition with reason SuccessPolicy, its remaining
// pods are stopped, then it is Complete.
type SuccessPolicy struct {
	Rules []SuccessPolicyRule `json:"rules"`
}

// SuccessPolicyRule is met when the succeeded indexes include
// succeededIndexes (or succeededCount of them), or, without
// succeededIndexes, when succeededCount indexes succeeded.
type SuccessPolicyRule struct {
	SucceededIndexes *string `json:"succeededIndexes,omitempty"`
	SucceededCount   *int32  `json:"succeededCount,omitempty"`
}

// PodFailurePolicyAction is what a pod failure policy rule does.
type PodFailurePolicyAction string

// Pod failure policy actions.
const (
	PodFailurePolicyActionFailJob   PodFailurePolicyAction = "FailJob"
	PodFailurePolicyActionFailIndex PodFailurePolicyAction = "FailIndex"
	PodFailurePolicyActionIgnore    PodFailurePolicyAction = "Ignore"
	PodFailurePolicyActionCount     PodFailurePolicyAction = "Count"
)

// PodFailurePolicy decides what a pod failure means for the job.
type PodFailurePolicy struct {
	Rules []PodFailurePolicyRule `json:"rules"`
}

// PodFailurePolicyRule matches failed pods by exit codes or conditions.
type PodFailurePolicyRule struct {
	Action          PodFailurePolicyAction                   `json:"action"`
	OnExitCodes     *PodFailurePolicyOnExitCodesRequirement  `json:"onExitCodes,omitempty"`
	OnPodConditions []PodFailurePolicyOnPodConditionsPattern `json:"onPodConditions,omitempty"`
}

// PodFailurePolicyOnExitCodesRequirement matches container exit codes
// (operator In or NotIn).
type PodFailurePolicyOnExitCodesRequirement struct {
	ContainerName *string `json:"containerName,omitempty"`
	Operator      string  `json:"operator"`
	Values        []int32 `json:"values"`
}

// PodFailurePolicyOnPodConditionsPattern matches a pod condition.
type PodFailurePolicyOnPodConditionsPattern struct {
	Type   PodConditionType `json:"type"`
	Status ConditionStatus  `json:"status"`
}

// JobConditionType is the type of a job condition.
type JobConditionType string

// Job condition types.
const (
	JobSuspended          JobConditionType = "Suspended"
	JobComplete           JobConditionType = "Complete"
	JobFailed             JobConditionType = "Failed"
	JobFailureTarget      JobConditionType = "FailureTarget"
	JobSuccessCriteriaMet JobConditionType = "SuccessCriteriaMet"
)

// Reasons of the Failed condition.
const (
	JobReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	JobReasonDeadlineExceeded     = "DeadlineExceeded"
	JobReasonPodFailurePolicy     = "PodFailurePolicy"
	// JobReasonMaxFailedIndexesExceeded: more indexes failed than
	// maxFailedIndexes.
	JobReasonMaxFailedIndexesExceeded = "MaxFailedIndexesExceeded"
	// JobReasonFailedIndexes: every index finished, some failed.
	JobReasonFailedIndexes = "FailedIndexes"
)

// Reasons of the SuccessCriteriaMet condition (and of the Complete one
// that follows it).
const (
	// JobReasonCompletionsReached: completions pods succeeded.
	JobReasonCompletionsReached = "CompletionsReached"
	// JobReasonSuccessPolicy: a rule of spec.successPolicy was met.
	JobReasonSuccessPolicy = "SuccessPolicy"
)

// JobStatus is the observed state of a job.
type JobStatus struct {
	Conditions       []JobCondition `json:"conditions,omitempty"`
	StartTime        *Time          `json:"startTime,omitempty"`
	CompletionTime   *Time          `json:"completionTime,omitempty"`
	Active           int32          `json:"active,omitempty"`
	Succeeded        int32          `json:"succeeded,omitempty"`
	Failed           int32          `json:"failed,omitempty"`
	Terminating      *int32         `json:"terminating,omitempty"`
	CompletedIndexes string         `json:"completedIndexes,omitempty"`
	FailedIndexes    *string        `json:"failedIndexes,omitempty"`
	// UncountedTerminatedPods lists finished pods the controller has not yet
	// counted, so that a crash between removing a pod's finalizer and
	// updating the counters neither loses nor double-counts it.
	UncountedTerminatedPods *UncountedTerminatedPods `json:"uncountedTerminatedPods,omitempty"`
	Ready                   *int32                   `json:"ready,omitempty"`
}

// UncountedTerminatedPods holds the UIDs of finished, not yet counted pods.
type UncountedTerminatedPods struct {
	Succeeded []UID `json:"succeeded,omitempty"`
	Failed    []UID `json:"failed,omitempty"`
}

// JobCondition is one condition of a job.
type JobCondition struct {
	Type               JobConditionType `json:"type"`
	Status             ConditionStatus  `json:"status"`
	LastProbeTime      Time             `json:"lastProbeTime,omitzero"`
	LastTransitionTime Time             `json:"lastTransitionTime,omitzero"`
	Reason             string           `json:"reason,omitempty"`
	Message            string           `json:"message,omitempty"`
}
