package api

// flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations,
// with every field of k8s.io/api v0.37.2. They are served and validated and
// kube's defaults are created at start; API priority and fairness does not
// act on them yet.

// FlowSchema defines the schema of a group of flows.
type FlowSchema struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       FlowSchemaSpec   `json:"spec"`
	Status     FlowSchemaStatus `json:"status"`
}

// PriorityLevelConfiguration represents the configuration of a priority
// level.
type PriorityLevelConfiguration struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PriorityLevelConfigurationSpec   `json:"spec"`
	Status     PriorityLevelConfigurationStatus `json:"status"`
}

// FlowSchemaSpec describes how the FlowSchema's specification looks like.
type FlowSchemaSpec struct {
	PriorityLevelConfiguration PriorityLevelConfigurationReference `json:"priorityLevelConfiguration"`
	MatchingPrecedence         int32                               `json:"matchingPrecedence"`
	DistinguisherMethod        *FlowDistinguisherMethod            `json:"distinguisherMethod,omitempty"`
	Rules                      []PolicyRulesWithSubjects           `json:"rules,omitempty"`
}

// FlowSchemaStatus represents the current state of a FlowSchema.
type FlowSchemaStatus struct {
	Conditions []FlowSchemaCondition `json:"conditions,omitempty"`
}

// PriorityLevelConfigurationSpec specifies the configuration of a priority
// level.
type PriorityLevelConfigurationSpec struct {
	Type    PriorityLevelEnablement            `json:"type"`
	Limited *LimitedPriorityLevelConfiguration `json:"limited,omitempty"`
	Exempt  *ExemptPriorityLevelConfiguration  `json:"exempt,omitempty"`
}

// PriorityLevelConfigurationStatus represents the current state of a
// "request-priority".
type PriorityLevelConfigurationStatus struct {
	Conditions []PriorityLevelConfigurationCondition `json:"conditions,omitempty"`
}

// PriorityLevelConfigurationReference contains information that points to the
// "request-priority" being used.
type PriorityLevelConfigurationReference struct {
	Name string `json:"name"`
}

// FlowDistinguisherMethod specifies the method of a flow distinguisher.
type FlowDistinguisherMethod struct {
	Type FlowDistinguisherMethodType `json:"type"`
}

// PolicyRulesWithSubjects prescribes a test that applies to a request to an
// apiserver.
type PolicyRulesWithSubjects struct {
	Subjects         []FlowSchemaSubject     `json:"subjects"`
	ResourceRules    []ResourcePolicyRule    `json:"resourceRules,omitempty"`
	NonResourceRules []NonResourcePolicyRule `json:"nonResourceRules,omitempty"`
}

// FlowSchemaCondition describes conditions for a FlowSchema.
type FlowSchemaCondition struct {
	Type               FlowSchemaConditionType `json:"type,omitempty"`
	Status             ConditionStatus         `json:"status,omitempty"`
	LastTransitionTime Time                    `json:"lastTransitionTime,omitzero"`
	Reason             string                  `json:"reason,omitempty"`
	Message            string                  `json:"message,omitempty"`
}

// PriorityLevelEnablement is k8s.io/api's PriorityLevelEnablement.
type PriorityLevelEnablement string

// LimitedPriorityLevelConfiguration specifies how to handle requests that are
// subject to limits.
type LimitedPriorityLevelConfiguration struct {
	NominalConcurrencyShares *int32        `json:"nominalConcurrencyShares"`
	LimitResponse            LimitResponse `json:"limitResponse"`
	LendablePercent          *int32        `json:"lendablePercent,omitempty"`
	BorrowingLimitPercent    *int32        `json:"borrowingLimitPercent,omitempty"`
}

// ExemptPriorityLevelConfiguration describes the configurable aspects of the
// handling of exempt requests.
type ExemptPriorityLevelConfiguration struct {
	NominalConcurrencyShares *int32 `json:"nominalConcurrencyShares,omitempty"`
	LendablePercent          *int32 `json:"lendablePercent,omitempty"`
}

// PriorityLevelConfigurationCondition defines the condition of priority
// level.
type PriorityLevelConfigurationCondition struct {
	Type               PriorityLevelConfigurationConditionType `json:"type,omitempty"`
	Status             ConditionStatus                         `json:"status,omitempty"`
	LastTransitionTime Time                                    `json:"lastTransitionTime,omitzero"`
	Reason             string                                  `json:"reason,omitempty"`
	Message            string                                  `json:"message,omitempty"`
}

// FlowDistinguisherMethodType is k8s.io/api's FlowDistinguisherMethodType.
type FlowDistinguisherMethodType string

// FlowSchemaSubject (flowcontrol's Subject) matches the originator of a request, as
// identified by the request authentication system.
type FlowSchemaSubject struct {
	Kind           SubjectKind            `json:"kind"`
	User           *UserSubject           `json:"user,omitempty"`
	Group          *GroupSubject          `json:"group,omitempty"`
	ServiceAccount *ServiceAccountSubject `json:"serviceAccount,omitempty"`
}

// ResourcePolicyRule is a predicate that matches some resource requests,
// testing the request's verb and the target resource.
type ResourcePolicyRule struct {
	Verbs        []string `json:"verbs"`
	APIGroups    []string `json:"apiGroups"`
	Resources    []string `json:"resources"`
	ClusterScope bool     `json:"clusterScope,omitempty"`
	Namespaces   []string `json:"namespaces"`
}

// NonResourcePolicyRule is a predicate that matches non-resource requests
// according to their verb and the target non-resource URL.
type NonResourcePolicyRule struct {
	Verbs           []string `json:"verbs"`
	NonResourceURLs []string `json:"nonResourceURLs"`
}

// FlowSchemaConditionType is k8s.io/api's FlowSchemaConditionType.
type FlowSchemaConditionType string

// LimitResponse defines how to handle requests that can not be executed right
// now.
type LimitResponse struct {
	Type    LimitResponseType     `json:"type"`
	Queuing *QueuingConfiguration `json:"queuing,omitempty"`
}

// PriorityLevelConfigurationConditionType is k8s.io/api's
// PriorityLevelConfigurationConditionType.
type PriorityLevelConfigurationConditionType string

// SubjectKind is k8s.io/api's SubjectKind.
type SubjectKind string

// UserSubject holds detailed information for user-kind subject.
type UserSubject struct {
	Name string `json:"name"`
}

// GroupSubject holds detailed information for group-kind subject.
type GroupSubject struct {
	Name string `json:"name"`
}

// ServiceAccountSubject holds detailed information for service-account-kind
// subject.
type ServiceAccountSubject struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// LimitResponseType is k8s.io/api's LimitResponseType.
type LimitResponseType string

// QueuingConfiguration holds the configuration parameters for queuing
type QueuingConfiguration struct {
	Queues           int32 `json:"queues"`
	HandSize         int32 `json:"handSize"`
	QueueLengthLimit int32 `json:"queueLengthLimit"`
}
