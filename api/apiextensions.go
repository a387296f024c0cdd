package api

import "encoding/json"

// apiextensions.k8s.io/v1: CustomResourceDefinitions. The OpenAPI schema of
// a version (JSONSchemaProps in Kubernetes) is kept as the JSON it is: the
// apiserver reads it with k8s.io/apiextensions-apiserver's own types, which
// also give it its canonical shape when a CRD is written.

// APIExtensionsGroupName is the group of CustomResourceDefinitions.
const APIExtensionsGroupName = "apiextensions.k8s.io"

// CustomResourceDefinition describes a resource the apiserver serves
// beside its built-in kinds.
type CustomResourceDefinition struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       CustomResourceDefinitionSpec   `json:"spec"`
	Status     CustomResourceDefinitionStatus `json:"status"`
}

// CustomResourceDefinitionSpec is the resource a CRD defines.
type CustomResourceDefinitionSpec struct {
	Group                 string                            `json:"group"`
	Names                 CustomResourceDefinitionNames     `json:"names"`
	Scope                 ResourceScope                     `json:"scope"`
	Versions              []CustomResourceDefinitionVersion `json:"versions"`
	Conversion            *CustomResourceConversion         `json:"conversion,omitempty"`
	PreserveUnknownFields bool                              `json:"preserveUnknownFields,omitempty"`
}

// ResourceScope is Namespaced or Cluster.
type ResourceScope string

// The scopes of a custom resource.
const (
	ClusterScoped   ResourceScope = "Cluster"
	NamespaceScoped ResourceScope = "Namespaced"
)

// CustomResourceDefinitionNames are the names a custom resource is served under.
type CustomResourceDefinitionNames struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// CustomResourceDefinitionVersion is one version of a custom resource.
type CustomResourceDefinitionVersion struct {
	Name                     string                           `json:"name"`
	Served                   bool                             `json:"served"`
	Storage                  bool                             `json:"storage"`
	Deprecated               bool                             `json:"deprecated,omitempty"`
	DeprecationWarning       *string                          `json:"deprecationWarning,omitempty"`
	Schema                   *CustomResourceValidation        `json:"schema,omitempty"`
	Subresources             *CustomResourceSubresources      `json:"subresources,omitempty"`
	AdditionalPrinterColumns []CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`
	SelectableFields         []SelectableField                `json:"selectableFields,omitempty"`
}

// CustomResourceValidation holds a version's schema.
type CustomResourceValidation struct {
	// OpenAPIV3Schema is the JSONSchemaProps document, as JSON.
	OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema,omitempty"`
}

// CustomResourceSubresources are the status and scale subresources of a version.
type CustomResourceSubresources struct {
	Status *CustomResourceSubresourceStatus `json:"status,omitempty"`
	Scale  *CustomResourceSubresourceScale  `json:"scale,omitempty"`
}

// CustomResourceSubresourceStatus enables /status; it has no fields.
type CustomResourceSubresourceStatus struct{}

// CustomResourceSubresourceScale says where /scale finds its numbers.
type CustomResourceSubresourceScale struct {
	SpecReplicasPath   string  `json:"specReplicasPath"`
	StatusReplicasPath string  `json:"statusReplicasPath"`
	LabelSelectorPath  *string `json:"labelSelectorPath,omitempty"`
}

// CustomResourceColumnDefinition is one additional printer column.
type CustomResourceColumnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// SelectableField is a field usable in field selectors.
type SelectableField struct {
	JSONPath string `json:"jsonPath"`
}

// CustomResourceConversion says how versions convert: None, or Webhook.
type CustomResourceConversion struct {
	Strategy string             `json:"strategy"`
	Webhook  *WebhookConversion `json:"webhook,omitempty"`
}

// WebhookConversion is the webhook that converts between versions.
type WebhookConversion struct {
	ClientConfig             *CRDWebhookClientConfig `json:"clientConfig,omitempty"`
	ConversionReviewVersions []string                `json:"conversionReviewVersions"`
}

// CRDWebhookClientConfig is how a conversion webhook is reached.
type CRDWebhookClientConfig struct {
	URL      *string              `json:"url,omitempty"`
	Service  *CRDServiceReference `json:"service,omitempty"`
	CABundle []byte               `json:"caBundle,omitempty"`
}

// CRDServiceReference names the Service of a conversion webhook.
type CRDServiceReference struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      *int32  `json:"port,omitempty"`
}

// CustomResourceDefinitionStatus is what the apiserver reports of a CRD.
type CustomResourceDefinitionStatus struct {
	Conditions     []CustomResourceDefinitionCondition `json:"conditions"`
	AcceptedNames  CustomResourceDefinitionNames       `json:"acceptedNames"`
	StoredVersions []string                            `json:"storedVersions"`
	// ObservedGeneration is the generation the conditions describe.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// CustomResourceDefinitionCondition is one condition of a CRD.
type CustomResourceDefinitionCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime Time   `json:"lastTransitionTime,omitzero"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

// The conditions of a CRD.
const (
	CRDEstablished    = "Established"
	CRDNamesAccepted  = "NamesAccepted"
	CRDTerminating    = "Terminating"
	CRDNonStructural  = "NonStructuralSchema"
	CRDKubeAPIApprove = "KubernetesAPIApprovalPolicyConformant"
)

// CRDCleanupFinalizer makes a deleted CRD wait until its objects are gone.
const CRDCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"
