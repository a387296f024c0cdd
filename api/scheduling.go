package api

// scheduling.k8s.io/v1 PriorityClasses, with every field of k8s.io/api
// v0.37.2. The Priority admission plugin (apiserver/admission) resolves a
// pod's priorityClassName through them.

// PriorityClass defines mapping from a priority class name to the priority
// integer value.
type PriorityClass struct {
	TypeMeta         `json:",inline"`
	ObjectMeta       `json:"metadata"`
	Value            int32             `json:"value"`
	GlobalDefault    bool              `json:"globalDefault,omitempty"`
	Description      string            `json:"description,omitempty"`
	PreemptionPolicy *PreemptionPolicy `json:"preemptionPolicy,omitempty"`
}
