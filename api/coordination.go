package api

// Lease (coordination.k8s.io/v1) is used for node heartbeats and leader election.
type Lease struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       LeaseSpec `json:"spec,omitzero"`
}

// LeaseSpec is the specification of a Lease.
type LeaseSpec struct {
	HolderIdentity       *string    `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32     `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *MicroTime `json:"renewTime,omitempty"`
	LeaseTransitions     *int32     `json:"leaseTransitions,omitempty"`
	Strategy             *string    `json:"strategy,omitempty"`
	PreferredHolder      *string    `json:"preferredHolder,omitempty"`
}

// LeaseList is a list of Leases.
type LeaseList = List[Lease]
