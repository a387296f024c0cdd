package registry

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/admission/policy"
)

// celStrategy serves the admissionregistration.k8s.io kinds whose CEL
// expressions must compile: a Validating- or MutatingAdmissionPolicy's, and the
// matchConditions of webhook configurations.
type celStrategy struct {
	BaseStrategy
	check func(api.Object) field.ErrorList
}

func (s celStrategy) Validate(ctx context.Context, obj api.Object) field.ErrorList {
	errs := s.BaseStrategy.Validate(ctx, obj)
	return append(errs, s.check(obj)...)
}

func (s celStrategy) ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	errs := s.BaseStrategy.ValidateUpdate(ctx, obj, old)
	return append(errs, s.check(obj)...)
}

func policyExpressions(obj api.Object) field.ErrorList {
	return policy.ValidatePolicyExpressions(obj.(*api.ValidatingAdmissionPolicy))
}

func mutatingPolicyExpressions(obj api.Object) field.ErrorList {
	return policy.ValidateMutatingPolicyExpressions(obj.(*api.MutatingAdmissionPolicy))
}
