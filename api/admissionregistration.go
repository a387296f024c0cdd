package api

// Kinds of admissionregistration.k8s.io/v1: the webhook configurations the
// apiserver calls out to during admission, and the CEL admission policies
// and their bindings it evaluates itself.

// FailurePolicyType says what happens when a webhook or policy cannot be
// called or evaluated.
type FailurePolicyType string

// Failure policies.
const (
	FailurePolicyIgnore FailurePolicyType = "Ignore"
	FailurePolicyFail   FailurePolicyType = "Fail"
)

// MatchPolicyType says how rules match a request made through another
// version of the resource.
type MatchPolicyType string

// Match policies.
const (
	MatchPolicyExact      MatchPolicyType = "Exact"
	MatchPolicyEquivalent MatchPolicyType = "Equivalent"
)

// SideEffectClass says whether a webhook has side effects beyond its answer.
type SideEffectClass string

// Side effect classes; v1 admits only None and NoneOnDryRun.
const (
	SideEffectClassUnknown      SideEffectClass = "Unknown"
	SideEffectClassNone         SideEffectClass = "None"
	SideEffectClassSome         SideEffectClass = "Some"
	SideEffectClassNoneOnDryRun SideEffectClass = "NoneOnDryRun"
)

// ReinvocationPolicyType says whether a mutating webhook is called again
// when a later one changed the object.
type ReinvocationPolicyType string

// Reinvocation policies.
const (
	ReinvocationNever    ReinvocationPolicyType = "Never"
	ReinvocationIfNeeded ReinvocationPolicyType = "IfNeeded"
)

// ScopeType restricts a rule to cluster- or namespace-scoped resources.
type ScopeType string

// Scopes.
const (
	ClusterScope    ScopeType = "Cluster"
	NamespacedScope ScopeType = "Namespaced"
	AllScopes       ScopeType = "*"
)

// OperationType is an operation a rule matches ("*" for all).
type OperationType string

// Operations of rules.
const (
	OperationAll     OperationType = "*"
	OperationCreate  OperationType = "CREATE"
	OperationUpdate  OperationType = "UPDATE"
	OperationDelete  OperationType = "DELETE"
	OperationConnect OperationType = "CONNECT"
)

// ValidationAction is what a failed policy validation does.
type ValidationAction string

// Validation actions.
const (
	ValidationActionDeny  ValidationAction = "Deny"
	ValidationActionWarn  ValidationAction = "Warn"
	ValidationActionAudit ValidationAction = "Audit"
)

// ParameterNotFoundActionType says what a binding does when its params are missing.
type ParameterNotFoundActionType string

// Parameter-not-found actions.
const (
	ParameterNotFoundAllow ParameterNotFoundActionType = "Allow"
	ParameterNotFoundDeny  ParameterNotFoundActionType = "Deny"
)

// Rule matches API groups, versions and resources ("pods", "pods/status",
// "*/scale", "*").
type Rule struct {
	APIGroups   []string   `json:"apiGroups,omitempty"`
	APIVersions []string   `json:"apiVersions,omitempty"`
	Resources   []string   `json:"resources,omitempty"`
	Scope       *ScopeType `json:"scope,omitempty"`
}

// RuleWithOperations is a Rule and the operations it matches.
type RuleWithOperations struct {
	Operations []OperationType `json:"operations,omitempty"`
	Rule       `json:",inline"`
}

// NamedRuleWithOperations is a RuleWithOperations limited to resource names.
type NamedRuleWithOperations struct {
	ResourceNames      []string `json:"resourceNames,omitempty"`
	RuleWithOperations `json:",inline"`
}

// ServiceReference names the Service a webhook is reached through.
type ServiceReference struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      *int32  `json:"port,omitempty"`
}

// WebhookClientConfig says how to reach a webhook: a URL or a Service, and
// the CA bundle its serving certificate is checked against.
type WebhookClientConfig struct {
	URL      *string           `json:"url,omitempty"`
	Service  *ServiceReference `json:"service,omitempty"`
	CABundle []byte            `json:"caBundle,omitempty"`
}

// MatchCondition is a CEL expression a request must meet to be sent.
type MatchCondition struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// ValidatingWebhook is one webhook of a ValidatingWebhookConfiguration.
type ValidatingWebhook struct {
	Name                    string               `json:"name"`
	ClientConfig            WebhookClientConfig  `json:"clientConfig"`
	Rules                   []RuleWithOperations `json:"rules,omitempty"`
	FailurePolicy           *FailurePolicyType   `json:"failurePolicy,omitempty"`
	MatchPolicy             *MatchPolicyType     `json:"matchPolicy,omitempty"`
	NamespaceSelector       *LabelSelector       `json:"namespaceSelector,omitempty"`
	ObjectSelector          *LabelSelector       `json:"objectSelector,omitempty"`
	SideEffects             *SideEffectClass     `json:"sideEffects"`
	TimeoutSeconds          *int32               `json:"timeoutSeconds,omitempty"`
	AdmissionReviewVersions []string             `json:"admissionReviewVersions"`
	MatchConditions         []MatchCondition     `json:"matchConditions,omitempty"`
}

// MutatingWebhook is one webhook of a MutatingWebhookConfiguration.
type MutatingWebhook struct {
	Name                    string                  `json:"name"`
	ClientConfig            WebhookClientConfig     `json:"clientConfig"`
	Rules                   []RuleWithOperations    `json:"rules,omitempty"`
	FailurePolicy           *FailurePolicyType      `json:"failurePolicy,omitempty"`
	MatchPolicy             *MatchPolicyType        `json:"matchPolicy,omitempty"`
	NamespaceSelector       *LabelSelector          `json:"namespaceSelector,omitempty"`
	ObjectSelector          *LabelSelector          `json:"objectSelector,omitempty"`
	SideEffects             *SideEffectClass        `json:"sideEffects"`
	TimeoutSeconds          *int32                  `json:"timeoutSeconds,omitempty"`
	AdmissionReviewVersions []string                `json:"admissionReviewVersions"`
	ReinvocationPolicy      *ReinvocationPolicyType `json:"reinvocationPolicy,omitempty"`
	MatchConditions         []MatchCondition        `json:"matchConditions,omitempty"`
}

// ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1) lists
// webhooks that may refuse writes.
type ValidatingWebhookConfiguration struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Webhooks   []ValidatingWebhook `json:"webhooks,omitempty"`
}

// ValidatingWebhookConfigurationList is a list of ValidatingWebhookConfigurations.
type ValidatingWebhookConfigurationList = List[ValidatingWebhookConfiguration]

// MutatingWebhookConfiguration (admissionregistration.k8s.io/v1) lists
// webhooks that may change and refuse writes.
type MutatingWebhookConfiguration struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Webhooks   []MutatingWebhook `json:"webhooks,omitempty"`
}

// MutatingWebhookConfigurationList is a list of MutatingWebhookConfigurations.
type MutatingWebhookConfigurationList = List[MutatingWebhookConfiguration]

// ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) is a set of
// CEL validations the apiserver applies to the requests its bindings match.
type ValidatingAdmissionPolicy struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ValidatingAdmissionPolicySpec   `json:"spec,omitzero"`
	Status     ValidatingAdmissionPolicyStatus `json:"status,omitzero"`
}

// ValidatingAdmissionPolicyList is a list of ValidatingAdmissionPolicies.
type ValidatingAdmissionPolicyList = List[ValidatingAdmissionPolicy]

// ValidatingAdmissionPolicySpec is the policy.
type ValidatingAdmissionPolicySpec struct {
	ParamKind        *ParamKind         `json:"paramKind,omitempty"`
	MatchConstraints *MatchResources    `json:"matchConstraints,omitempty"`
	Validations      []Validation       `json:"validations,omitempty"`
	FailurePolicy    *FailurePolicyType `json:"failurePolicy,omitempty"`
	AuditAnnotations []AuditAnnotation  `json:"auditAnnotations,omitempty"`
	MatchConditions  []MatchCondition   `json:"matchConditions,omitempty"`
	Variables        []Variable         `json:"variables,omitempty"`
}

// ParamKind is the kind of a policy's parameter objects.
type ParamKind struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// MatchResources selects the requests a policy or binding applies to.
type MatchResources struct {
	NamespaceSelector    *LabelSelector            `json:"namespaceSelector,omitempty"`
	ObjectSelector       *LabelSelector            `json:"objectSelector,omitempty"`
	ResourceRules        []NamedRuleWithOperations `json:"resourceRules,omitempty"`
	ExcludeResourceRules []NamedRuleWithOperations `json:"excludeResourceRules,omitempty"`
	MatchPolicy          *MatchPolicyType          `json:"matchPolicy,omitempty"`
}

// Validation is one CEL check of a policy.
type Validation struct {
	Expression        string        `json:"expression"`
	Message           string        `json:"message,omitempty"`
	Reason            *StatusReason `json:"reason,omitempty"`
	MessageExpression string        `json:"messageExpression,omitempty"`
}

// Variable is a named CEL expression other expressions use as variables.NAME.
type Variable struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// AuditAnnotation is an audit annotation a policy computes.
type AuditAnnotation struct {
	Key             string `json:"key"`
	ValueExpression string `json:"valueExpression"`
}

// ValidatingAdmissionPolicyStatus is the type checker's report.
type ValidatingAdmissionPolicyStatus struct {
	ObservedGeneration int64         `json:"observedGeneration,omitempty"`
	TypeChecking       *TypeChecking `json:"typeChecking,omitempty"`
	Conditions         []Condition   `json:"conditions,omitempty"`
}

// TypeChecking holds the type checker's warnings.
type TypeChecking struct {
	ExpressionWarnings []ExpressionWarning `json:"expressionWarnings,omitempty"`
}

// ExpressionWarning is one type checker warning.
type ExpressionWarning struct {
	FieldRef string `json:"fieldRef"`
	Warning  string `json:"warning"`
}

// ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1)
// applies a policy, with its params, to the requests it matches.
type ValidatingAdmissionPolicyBinding struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       ValidatingAdmissionPolicyBindingSpec `json:"spec,omitzero"`
}

// ValidatingAdmissionPolicyBindingList is a list of ValidatingAdmissionPolicyBindings.
type ValidatingAdmissionPolicyBindingList = List[ValidatingAdmissionPolicyBinding]

// ValidatingAdmissionPolicyBindingSpec is the binding.
type ValidatingAdmissionPolicyBindingSpec struct {
	PolicyName        string             `json:"policyName,omitempty"`
	ParamRef          *ParamRef          `json:"paramRef,omitempty"`
	MatchResources    *MatchResources    `json:"matchResources,omitempty"`
	ValidationActions []ValidationAction `json:"validationActions,omitempty"`
}

// ParamRef names the parameter objects of a binding.
type ParamRef struct {
	Name                    string                       `json:"name,omitempty"`
	Namespace               string                       `json:"namespace,omitempty"`
	Selector                *LabelSelector               `json:"selector,omitempty"`
	ParameterNotFoundAction *ParameterNotFoundActionType `json:"parameterNotFoundAction,omitempty"`
}
