package api

// APIService (apiregistration.k8s.io/v1) says which server serves one
// group/version: the apiserver itself (no service: Local) or an extension
// apiserver behind a Service, to which the apiserver proxies.
type APIService struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       APIServiceSpec   `json:"spec,omitzero"`
	Status     APIServiceStatus `json:"status,omitzero"`
}

// APIServiceList is a list of APIServices.
type APIServiceList = List[APIService]

// APIServiceSpec locates the server of a group/version.
type APIServiceSpec struct {
	// Service is nil for a group/version the apiserver serves itself.
	Service *APIServiceReference `json:"service,omitempty"`
	Group   string               `json:"group,omitempty"`
	Version string               `json:"version,omitempty"`
	// InsecureSkipTLSVerify skips the check of the service's certificate;
	// CABundle is the PEM bundle it is checked against otherwise.
	InsecureSkipTLSVerify bool   `json:"insecureSkipTLSVerify,omitempty"`
	CABundle              []byte `json:"caBundle,omitempty"`
	// GroupPriorityMinimum and VersionPriority order groups and versions
	// in discovery.
	GroupPriorityMinimum int32 `json:"groupPriorityMinimum"`
	VersionPriority      int32 `json:"versionPriority"`
}

// APIServiceReference names the Service of an extension apiserver.
type APIServiceReference struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Port defaults to 443.
	Port *int32 `json:"port,omitempty"`
}

// APIServiceStatus holds the Available condition.
type APIServiceStatus struct {
	Conditions []APIServiceCondition `json:"conditions,omitempty"`
}

// APIServiceCondition is one condition of an APIService.
type APIServiceCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime Time            `json:"lastTransitionTime,omitzero"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// APIServiceAvailable is the condition the aggregator keeps.
const APIServiceAvailable = "Available"

// AvailableCondition returns the Available condition, or nil.
func (s *APIService) AvailableCondition() *APIServiceCondition {
	for i := range s.Status.Conditions {
		if s.Status.Conditions[i].Type == APIServiceAvailable {
			return &s.Status.Conditions[i]
		}
	}
	return nil
}
