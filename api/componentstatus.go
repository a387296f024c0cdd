package api

// core v1 ComponentStatus, read-only: the apiserver answers for the
// components it probes.

// ComponentStatus (and ComponentStatusList) holds the cluster validation
// info.
type ComponentStatus struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Conditions []ComponentCondition `json:"conditions,omitempty"`
}

// ComponentCondition is information about the condition of a component.
type ComponentCondition struct {
	Type    ComponentConditionType `json:"type"`
	Status  ConditionStatus        `json:"status"`
	Message string                 `json:"message,omitempty"`
	Error   string                 `json:"error,omitempty"`
}

// ComponentConditionType is k8s.io/api's ComponentConditionType.
type ComponentConditionType string
