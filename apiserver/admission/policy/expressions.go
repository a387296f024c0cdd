package policy

import (
	"context"
	"fmt"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/authz"
)

// The CEL checks of Kubernetes' admissionregistration validation: every
// expression of a policy or a webhook's matchConditions must compile (and
// type-check) in the environment it will run in; the other rules are in
// api/validation. Expressions are checked as new ones (kube relaxes the
// environment for expressions an update keeps; minik8s has no stored
// expressions from an older environment).

var (
	statelessOnce     sync.Once
	statelessCompiler plugincel.Compiler
)

func stateless() plugincel.Compiler {
	statelessOnce.Do(func() {
		statelessCompiler = plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return statelessCompiler
}

// celError is a compile error as kube reports it at a field.
func celError(p *field.Path, expr string, err *cel.Error) *field.Error {
	switch err.Type {
	case cel.ErrorTypeRequired:
		return field.Required(p, err.Detail)
	case cel.ErrorTypeInvalid:
		return field.Invalid(p, expr, err.Detail)
	}
	return field.InternalError(p, err)
}

func check(c plugincel.Compiler, acc plugincel.ExpressionAccessor, vars plugincel.OptionalVariableDeclarations, p *field.Path) field.ErrorList {
	res := c.CompileCELExpression(acc, vars, environment.NewExpressions)
	if res.Error == nil {
		return nil
	}
	return field.ErrorList{celError(p, acc.GetExpression(), res.Error)}
}

// checkMatchConditions compiles a policy's match conditions (under p).
func checkMatchConditions(conds []api.MatchCondition, vars plugincel.OptionalVariableDeclarations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, mc := range conds {
		if e := strings.TrimSpace(mc.Expression); e != "" {
			errs = append(errs, check(stateless(), &matchconditions.MatchCondition{Name: mc.Name, Expression: e},
				vars, p.Child("matchConditions").Index(i).Child("expression"))...)
		}
	}
	return errs
}

// checkVariables compiles a policy's variables into cc, in order, so that
// each and the expressions compiled after see those before it.
func checkVariables(cc *plugincel.CompositedCompiler, variables []api.Variable, vars plugincel.OptionalVariableDeclarations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range variables {
		if strings.TrimSpace(v.Expression) == "" || strings.TrimSpace(v.Name) == "" {
			continue // required, said by api/validation
		}
		res := cc.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, vars, environment.NewExpressions)
		if res.Error != nil {
			errs = append(errs, celError(p.Child("variables").Index(i).Child("expression"), v.Expression, res.Error))
		}
	}
	return errs
}

// ValidatePolicyExpressions compiles the expressions of a policy.
func ValidatePolicyExpressions(vap *api.ValidatingAdmissionPolicy) field.ErrorList {
	spec, p := &vap.Spec, field.NewPath("spec")
	hasParams := spec.ParamKind != nil
	vars := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	errs := checkMatchConditions(spec.MatchConditions, vars, p)
	var compiler plugincel.Compiler = stateless()
	if len(spec.Variables) > 0 {
		cc, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
		if err != nil {
			return append(errs, field.InternalError(p.Child("variables"), err))
		}
		errs = append(errs, checkVariables(cc, spec.Variables, vars, p)...)
		compiler = cc
	}
	for i, v := range spec.Validations {
		vp := p.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) != "" {
			errs = append(errs, check(compiler, &validating.ValidationCondition{Expression: v.Expression}, vars, vp.Child("expression"))...)
		}
		if strings.TrimSpace(v.MessageExpression) != "" {
			// kube declares params for message expressions only when
			// params may appear in match conditions, i.e. with a paramKind.
			errs = append(errs, check(compiler, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression},
				plugincel.OptionalVariableDeclarations{HasParams: hasParams}, vp.Child("messageExpression"))...)
		}
	}
	for i, a := range spec.AuditAnnotations {
		if e := strings.TrimSpace(a.ValueExpression); e != "" {
			errs = append(errs, check(compiler, &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: e}, vars,
				p.Child("auditAnnotations").Index(i).Child("valueExpression"))...)
		}
	}
	return errs
}

// ValidateWebhookMatchConditions compiles the matchConditions of a
// webhook configuration's webhooks.
func ValidateWebhookMatchConditions(obj api.Object) field.ErrorList {
	var lists [][]api.MatchCondition
	switch o := obj.(type) {
	case *api.MutatingWebhookConfiguration:
		for _, w := range o.Webhooks {
			lists = append(lists, w.MatchConditions)
		}
	case *api.ValidatingWebhookConfiguration:
		for _, w := range o.Webhooks {
			lists = append(lists, w.MatchConditions)
		}
	default:
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("no webhooks in a %T", obj))}
	}
	vars := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	var errs field.ErrorList
	for i, conds := range lists {
		for j, mc := range conds {
			if e := strings.TrimSpace(mc.Expression); e != "" {
				errs = append(errs, check(stateless(), &matchconditions.MatchCondition{Name: mc.Name, Expression: e}, vars,
					field.NewPath("webhooks").Index(i).Child("matchConditions").Index(j).Child("expression"))...)
			}
		}
	}
	return errs
}

// MatchConditions are a webhook's compiled matchConditions.
type MatchConditions struct {
	matcher matchconditions.Matcher
}

// CompileMatchConditions compiles a webhook's matchConditions as kube's
// webhook plugins do (no params, authorizer declared). kind is "admit" for
// a mutating webhook, "validating" for a validating one.
func CompileMatchConditions(conds []api.MatchCondition, failurePolicy *api.FailurePolicyType, kind, webhook string) *MatchConditions {
	acc := make([]plugincel.ExpressionAccessor, len(conds))
	for i, c := range conds {
		acc[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
	}
	var fp *admissionregistrationv1.FailurePolicyType
	if failurePolicy != nil {
		v := admissionregistrationv1.FailurePolicyType(*failurePolicy)
		fp = &v
	}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return &MatchConditions{matcher: matchconditions.NewMatcher(nil, fp, "webhook", kind, webhook)}
	}
	filter := compiler.CompileCondition(acc, plugincel.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
	return &MatchConditions{matcher: matchconditions.NewMatcher(filter, fp, "webhook", kind, webhook)}
}

// Match evaluates the conditions on a as the target t: whether the
// webhook is called, or the error that refuses the request (a condition
// that failed to evaluate under failurePolicy Fail).
func (m *MatchConditions) Match(ctx context.Context, a *admission.Attributes, t *matching.Target, az authz.Authorizer) (bool, error) {
	va, _, err := versionedAttributes(a, t)
	if err != nil {
		return false, err
	}
	res := m.matcher.Match(ctx, va, nil, unconditional(az))
	if res.Error != nil {
		name := a.Name
		if name == "" && a.Object != nil {
			name = a.Object.GetObjectMeta().Name
		}
		return false, apierrors.NewForbidden(apierrors.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}, name, res.Error)
	}
	return res.Matches, nil
}

// ValidateMutatingPolicyExpressions compiles the expressions of a
// MutatingAdmissionPolicy as kube's validation does: match conditions,
// variables, and each mutation's apply configuration (which must be an
// Object{...}) or JSON patch (a list of JSONPatch{...}), with the patch
// types declared.
func ValidateMutatingPolicyExpressions(mp *api.MutatingAdmissionPolicy) field.ErrorList {
	spec, p := &mp.Spec, field.NewPath("spec")
	hasParams := spec.ParamKind != nil
	vars := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	errs := checkMatchConditions(spec.MatchConditions, vars, p)
	cc, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return append(errs, field.InternalError(p.Child("variables"), err))
	}
	errs = append(errs, checkVariables(cc, spec.Variables, vars, p)...)
	patchVars := vars
	patchVars.HasPatchTypes = true
	for i, m := range spec.Mutations {
		at := p.Child("mutations").Index(i)
		switch {
		case m.PatchType == api.PatchType(admissionregistrationv1.PatchTypeApplyConfiguration) && m.ApplyConfiguration != nil:
			if e := strings.TrimSpace(m.ApplyConfiguration.Expression); e != "" {
				errs = append(errs, check(cc, &patch.ApplyConfigurationCondition{Expression: e}, patchVars,
					at.Child("applyConfiguration", "expression"))...)
			}
		case m.PatchType == api.PatchType(admissionregistrationv1.PatchTypeJSONPatch) && m.JSONPatch != nil:
			if e := strings.TrimSpace(m.JSONPatch.Expression); e != "" {
				errs = append(errs, check(cc, &patch.JSONPatchCondition{Expression: e}, patchVars,
					at.Child("jsonPatch", "expression"))...)
			}
		}
	}
	return errs
}
