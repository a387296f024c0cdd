package api

// The review kinds of authorization.k8s.io/v1 and authentication.k8s.io/v1,
// and policy/v1 Eviction: requests a client POSTs and the apiserver answers
// with the same object, its status filled in. None of them is stored, so
// they are not in Resources (whose readers list, watch and collect what
// they find there); ReviewResources lists the review kinds for discovery
// and OpenAPI.

// Group names of the review kinds.
const (
	AuthorizationGroupName  = "authorization.k8s.io"
	AuthenticationGroupName = "authentication.k8s.io"
	PolicyGroupName         = "policy"
)

// ResourceAttributes describe a resource request, as SubjectAccessReviews
// ask about them.
type ResourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// NonResourceAttributes describe a request for a path that is not a resource.
type NonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

// SubjectAccessReviewSpec is a request and the user making it; exactly one
// of ResourceAttributes and NonResourceAttributes is set.
type SubjectAccessReviewSpec struct {
	ResourceAttributes    *ResourceAttributes    `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *NonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	User                  string                 `json:"user,omitempty"`
	Groups                []string               `json:"groups,omitempty"`
	Extra                 map[string]ExtraValue  `json:"extra,omitempty"`
	UID                   string                 `json:"uid,omitempty"`
}

// SubjectAccessReviewStatus is the authorizer's answer.
type SubjectAccessReviewStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied,omitempty"`
	Reason          string `json:"reason,omitempty"`
	EvaluationError string `json:"evaluationError,omitempty"`
}

// SubjectAccessReview (authorization.k8s.io/v1) asks whether any user may
// do something.
type SubjectAccessReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       SubjectAccessReviewSpec   `json:"spec"`
	Status     SubjectAccessReviewStatus `json:"status,omitzero"`
}

// LocalSubjectAccessReview (authorization.k8s.io/v1) is a SubjectAccessReview
// inside one namespace, so a namespace's administrator may be granted it.
type LocalSubjectAccessReview SubjectAccessReview

// SelfSubjectAccessReviewSpec is a request the caller asks about.
type SelfSubjectAccessReviewSpec struct {
	ResourceAttributes    *ResourceAttributes    `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *NonResourceAttributes `json:"nonResourceAttributes,omitempty"`
}

// SelfSubjectAccessReview (authorization.k8s.io/v1) asks whether the caller
// may do something: kubectl auth can-i.
type SelfSubjectAccessReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       SelfSubjectAccessReviewSpec `json:"spec"`
	Status     SubjectAccessReviewStatus   `json:"status,omitzero"`
}

// SelfSubjectRulesReviewSpec names the namespace whose rules are listed.
type SelfSubjectRulesReviewSpec struct {
	Namespace string `json:"namespace,omitempty"`
}

// ResourceRule is what a user may do to resources.
type ResourceRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// NonResourceRule is what a user may do to non-resource paths.
type NonResourceRule struct {
	Verbs           []string `json:"verbs"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// SubjectRulesReviewStatus lists the rules; Incomplete says some authorizer
// could not list its own (EvaluationError says which and why).
type SubjectRulesReviewStatus struct {
	ResourceRules    []ResourceRule    `json:"resourceRules"`
	NonResourceRules []NonResourceRule `json:"nonResourceRules"`
	Incomplete       bool              `json:"incomplete"`
	EvaluationError  string            `json:"evaluationError,omitempty"`
}

// SelfSubjectRulesReview (authorization.k8s.io/v1) lists what the caller may
// do in a namespace: kubectl auth can-i --list.
type SelfSubjectRulesReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       SelfSubjectRulesReviewSpec `json:"spec"`
	Status     SubjectRulesReviewStatus   `json:"status,omitzero"`
}

// UserInfo is an authenticated user, as the authentication reviews report it.
type UserInfo struct {
	Username string                `json:"username,omitempty"`
	UID      string                `json:"uid,omitempty"`
	Groups   []string              `json:"groups,omitempty"`
	Extra    map[string]ExtraValue `json:"extra,omitempty"`
}

// TokenReviewSpec is the token to check.
type TokenReviewSpec struct {
	Token     string   `json:"token,omitempty"`
	Audiences []string `json:"audiences,omitempty"`
}

// TokenReviewStatus says whether the token is valid and whose it is.
type TokenReviewStatus struct {
	Authenticated bool     `json:"authenticated,omitempty"`
	User          UserInfo `json:"user,omitzero"`
	Audiences     []string `json:"audiences,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// TokenReview (authentication.k8s.io/v1) authenticates a bearer token with
// the apiserver's own authenticators.
type TokenReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       TokenReviewSpec   `json:"spec"`
	Status     TokenReviewStatus `json:"status,omitzero"`
}

// SelfSubjectReviewStatus is the caller as the apiserver sees it.
type SelfSubjectReviewStatus struct {
	UserInfo UserInfo `json:"userInfo,omitzero"`
}

// SelfSubjectReview (authentication.k8s.io/v1) reports who the caller is:
// kubectl auth whoami.
type SelfSubjectReview struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Status     SelfSubjectReviewStatus `json:"status,omitzero"`
}

// BoundObjectReference names the object a token is bound to: a Pod,
// Secret or Node; the token stops working when it is gone.
type BoundObjectReference struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	UID        UID    `json:"uid,omitempty"`
}

// TokenRequestSpec is what a token is for.
type TokenRequestSpec struct {
	Audiences         []string              `json:"audiences"`
	ExpirationSeconds *int64                `json:"expirationSeconds"`
	BoundObjectRef    *BoundObjectReference `json:"boundObjectRef"`
}

// TokenRequestStatus is the token issued.
type TokenRequestStatus struct {
	Token               string `json:"token"`
	ExpirationTimestamp Time   `json:"expirationTimestamp"`
}

// TokenRequest (authentication.k8s.io/v1) is the body and answer of a POST
// to serviceaccounts/NAME/token.
type TokenRequest struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       TokenRequestSpec   `json:"spec"`
	Status     TokenRequestStatus `json:"status,omitzero"`
}

// Eviction (policy/v1) is the body of a POST to pods/NAME/eviction: delete
// the pod if its disruption budgets allow it.
type Eviction struct {
	TypeMeta      `json:",inline"`
	ObjectMeta    `json:"metadata"`
	DeleteOptions *DeleteOptions `json:"deleteOptions,omitempty"`
}
