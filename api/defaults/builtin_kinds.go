package defaults

import "github.com/minik8s/minik8s/api"

// builtinKinds defaults the kinds served for issue 25 as Kubernetes'
// SetDefaults_* of networking/v1, scheduling/v1, flowcontrol/v1 and
// admissionregistration/v1 do; it reports whether obj is one of them.
func builtinKinds(obj api.Object) bool {
	switch o := obj.(type) {
	case *api.NetworkPolicy:
		if len(o.Spec.PolicyTypes) == 0 {
			// No policyTypes implies at least Ingress.
			o.Spec.PolicyTypes = []api.PolicyType{"Ingress"}
			if len(o.Spec.Egress) != 0 {
				o.Spec.PolicyTypes = append(o.Spec.PolicyTypes, "Egress")
			}
		}
		for i := range o.Spec.Ingress {
			networkPolicyPorts(o.Spec.Ingress[i].Ports)
		}
		for i := range o.Spec.Egress {
			networkPolicyPorts(o.Spec.Egress[i].Ports)
		}
	case *api.IngressClass:
		if p := o.Spec.Parameters; p != nil && p.Scope == nil {
			p.Scope = ptr("Cluster")
		}
	case *api.PriorityClass:
		if o.PreemptionPolicy == nil {
			o.PreemptionPolicy = ptr(api.PreemptLowerPriority)
		}
	case *api.FlowSchema:
		if o.Spec.MatchingPrecedence == 0 {
			o.Spec.MatchingPrecedence = 1000
		}
	case *api.PriorityLevelConfiguration:
		PriorityLevelConfiguration(o)
	case *api.MutatingAdmissionPolicy:
		if o.Spec.FailurePolicy == nil {
			o.Spec.FailurePolicy = ptr(api.FailurePolicyFail)
		}
		matchResources(o.Spec.MatchConstraints)
	case *api.MutatingAdmissionPolicyBinding:
		matchResources(o.Spec.MatchResources)
	case *api.PodCertificateRequest:
		// A request without a lifetime asks for 24 hours, as kube's.
		if o.Spec.MaxExpirationSeconds == nil {
			o.Spec.MaxExpirationSeconds = ptr(api.PodCertificateProjectionDefaultMaxExpirationSeconds)
		}
	case *api.ResourceClaim:
		ResourceClaimSpec(&o.Spec)
	case *api.ResourceClaimTemplate:
		ResourceClaimSpec(&o.Spec.Spec)
	case *api.Ingress, *api.RuntimeClass, *api.ClusterTrustBundle:
		// No defaults in Kubernetes.
	default:
		return false
	}
	return true
}

func networkPolicyPorts(ports []api.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = ptr(api.ProtocolTCP)
		}
	}
}

// PriorityLevelConfiguration sets kube's flowcontrol/v1 defaults: 30
// nominal shares and 64 queues of 50 requests dealt hands of 8 for a
// limited level, nothing lent.
func PriorityLevelConfiguration(o *api.PriorityLevelConfiguration) {
	if e := o.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr(int32(0))
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr(int32(0))
		}
	}
	if l := o.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = ptr(int32(30))
		}
		if l.LendablePercent == nil {
			l.LendablePercent = ptr(int32(0))
		}
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = 8
			}
			if q.Queues == 0 {
				q.Queues = 64
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = 50
			}
		}
	}
}
