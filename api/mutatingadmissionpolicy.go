package api

// admissionregistration.k8s.io/v1 MutatingAdmissionPolicies and their
// bindings, with every field of k8s.io/api v0.37.2. They are served and
// validated, and their mutations applied at admission
// (apiserver/admission/policy).

// MutatingAdmissionPolicy describes the definition of an admission mutation
// policy that mutates the object coming into admission chain.
type MutatingAdmissionPolicy struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       MutatingAdmissionPolicySpec `json:"spec"`
}

// MutatingAdmissionPolicyBinding binds the MutatingAdmissionPolicy with
// parametrized resources.
type MutatingAdmissionPolicyBinding struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       MutatingAdmissionPolicyBindingSpec `json:"spec"`
}

// MutatingAdmissionPolicySpec defines the desired behavior of the admission
// policy.
type MutatingAdmissionPolicySpec struct {
	ParamKind          *ParamKind             `json:"paramKind,omitempty"`
	MatchConstraints   *MatchResources        `json:"matchConstraints,omitempty"`
	Variables          []Variable             `json:"variables,omitempty"`
	Mutations          []Mutation             `json:"mutations,omitempty"`
	FailurePolicy      *FailurePolicyType     `json:"failurePolicy,omitempty"`
	MatchConditions    []MatchCondition       `json:"matchConditions,omitempty"`
	ReinvocationPolicy ReinvocationPolicyType `json:"reinvocationPolicy,omitempty"`
}

// MutatingAdmissionPolicyBindingSpec defines the specification of the
// MutatingAdmissionPolicyBinding.
type MutatingAdmissionPolicyBindingSpec struct {
	PolicyName     string          `json:"policyName,omitempty"`
	ParamRef       *ParamRef       `json:"paramRef,omitempty"`
	MatchResources *MatchResources `json:"matchResources,omitempty"`
}

// Mutation specifies the CEL expression which is used to apply the Mutation.
type Mutation struct {
	PatchType          PatchType           `json:"patchType"`
	ApplyConfiguration *ApplyConfiguration `json:"applyConfiguration,omitempty"`
	JSONPatch          *JSONPatch          `json:"jsonPatch,omitempty"`
}

// PatchType is k8s.io/api's PatchType.
type PatchType string

// ApplyConfiguration defines the desired configuration values of an object.
type ApplyConfiguration struct {
	Expression string `json:"expression,omitempty"`
}

// JSONPatch defines a JSON Patch.
type JSONPatch struct {
	Expression string `json:"expression,omitempty"`
}
