package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// Source lists policies and bindings, sorted by name, from the watch
// caches; the objects are shared, never modified.
type Source interface {
	ValidatingAdmissionPolicies() []*api.ValidatingAdmissionPolicy
	ValidatingAdmissionPolicyBindings() []*api.ValidatingAdmissionPolicyBinding
}

// Params reads the parameter objects of a binding from the watch caches.
type Params interface {
	// ParamObjects returns the objects of resource r named name (all when
	// name is empty) in namespace ns ("" for a cluster-scoped r) whose
	// labels sel matches.
	ParamObjects(r api.ResourceInfo, ns, name string, sel labels.Selector) ([]api.Object, error)
	// ParamResource finds the resource of a paramKind (built-in or custom).
	ParamResource(apiVersion, kind string) (api.ResourceInfo, bool)
}

// Config is what the plugin needs.
type Config struct {
	Source     Source
	Params     Params
	Namespaces matching.Namespaces
	// Authorizer answers the expressions' authorizer variable.
	Authorizer authz.Authorizer
	Logger     *slog.Logger
}

// Plugin is the ValidatingAdmissionPolicy admission plugin.
type Plugin struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	compiled map[string]*compiledPolicy // by policy name
}

// compiledPolicy is a policy's validator as of one resourceVersion.
type compiledPolicy struct {
	rv        string
	policy    *admissionregistrationv1.ValidatingAdmissionPolicy
	validator validating.Validator
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin.
func New(cfg Config) *Plugin {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Plugin{cfg: cfg, log: log.With("component", "validating-admission-policy"), compiled: map[string]*compiledPolicy{}}
}

// Name implements admission.Plugin.
func (*Plugin) Name() string { return "ValidatingAdmissionPolicy" }

// Handles implements admission.Plugin: every operation.
func (*Plugin) Handles(admission.Operation) bool { return true }

var (
	envOnce sync.Once
	envSet  *environment.EnvSet
)

// compile builds the validator of p, as kube's compilePolicy does (a
// composited compiler for variables, strict cost, stored expressions).
func compile(p *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	envOnce.Do(func() { envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()) })
	hasParams := p.Spec.ParamKind != nil
	vars := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	msgVars := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false}
	compiler, err := plugincel.NewCompositedCompiler(envSet)
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	variables := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, vars, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if mc := p.Spec.MatchConditions; len(mc) > 0 {
		acc := make([]plugincel.ExpressionAccessor, len(mc))
		for i := range mc {
			acc[i] = (*matchconditions.MatchCondition)(&mc[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(acc, vars, environment.StoredExpressions),
			p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	validations := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		compiler.CompileCondition(validations, vars, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(audits, vars, environment.StoredExpressions),
		compiler.CompileCondition(messages, msgVars, environment.StoredExpressions),
		p.Spec.FailurePolicy, nil)
}

// convert turns one of our objects into its k8s.io/api twin (same JSON).
func convert[T any](in any) (*T, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	return out, nil
}

// policyFor returns the compiled form of p, compiling it once per
// resourceVersion.
func (pl *Plugin) policyFor(p *api.ValidatingAdmissionPolicy) (*compiledPolicy, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if c, ok := pl.compiled[p.Name]; ok && c.rv == p.ResourceVersion {
		return c, nil
	}
	kp, err := convert[admissionregistrationv1.ValidatingAdmissionPolicy](p)
	if err != nil {
		return nil, err
	}
	c := &compiledPolicy{rv: p.ResourceVersion, policy: kp, validator: compile(kp)}
	pl.compiled[p.Name] = c
	return c, nil
}

// decision is a refusal with the policy and binding it came from.
type decision struct {
	policy, binding string
	message         string
	reason          metav1.StatusReason
}

// Validate evaluates every policy that matches a through each of its
// bindings that matches it.
func (pl *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if matching.Exempt(a) {
		return nil
	}
	policies := pl.cfg.Source.ValidatingAdmissionPolicies()
	if len(policies) == 0 {
		return nil
	}
	bindings := pl.cfg.Source.ValidatingAdmissionPolicyBindings()
	if len(bindings) == 0 {
		return nil
	}
	var denied []decision
	var failures []validationFailure
	configError := func(p *api.ValidatingAdmissionPolicy, binding string, err error) {
		if p.Spec.FailurePolicy != nil && *p.Spec.FailurePolicy == api.FailurePolicyIgnore {
			return
		}
		msg := fmt.Errorf("failed to configure policy: %w", err).Error()
		if binding != "" {
			msg = fmt.Errorf("failed to configure binding: %w", err).Error()
		}
		denied = append(denied, decision{policy: p.Name, binding: binding, message: msg})
	}
	var ev *evaluation
	for _, p := range policies {
		if p.Spec.MatchConstraints == nil {
			continue
		}
		t, err := matching.MatchResources(ctx, pl.cfg.Namespaces, p.Spec.MatchConstraints, a)
		if err != nil {
			configError(p, "", err)
			continue
		}
		if t == nil {
			continue
		}
		compiled, err := pl.policyFor(p)
		if err != nil {
			configError(p, "", err)
			continue
		}
		for _, b := range bindings {
			if b.Spec.PolicyName != p.Name {
				continue
			}
			if m := b.Spec.MatchResources; m != nil {
				bt, err := matching.MatchResources(ctx, pl.cfg.Namespaces, m, a)
				if err != nil {
					configError(p, b.Name, err)
					continue
				}
				if bt == nil {
					continue
				}
			}
			params, err := pl.params(p, b, a.Namespace)
			if err != nil {
				configError(p, b.Name, err)
				continue
			}
			if ev == nil {
				if ev, err = pl.newEvaluation(ctx, a, t); err != nil {
					return err
				}
			}
			for _, param := range params {
				res := compiled.validator.Validate(ctx, ev.resource, ev.attrs, param, ev.namespace, celconfig.RuntimeCELCostBudget, unconditional(pl.cfg.Authorizer))
				for i, d := range res.Decisions {
					if d.Action != validating.ActionDeny {
						continue
					}
					for _, action := range b.Spec.ValidationActions {
						switch action {
						case api.ValidationActionDeny:
							denied = append(denied, decision{policy: p.Name, binding: b.Name, message: d.Message, reason: d.Reason})
						case api.ValidationActionWarn:
							warning.Add(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.Name, b.Name, d.Message))
						case api.ValidationActionAudit:
							failures = append(failures, validationFailure{Message: d.Message, Policy: p.Name, Binding: b.Name,
								ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions})
						}
					}
				}
				for _, an := range res.AuditAnnotations {
					switch an.Action {
					case validating.AuditAnnotationActionPublish:
						audit.AddAnnotation(ctx, p.Name+"/"+an.Key, an.Value)
					case validating.AuditAnnotationActionError:
						denied = append(denied, decision{policy: p.Name, binding: b.Name, message: an.Error})
					}
				}
			}
		}
	}
	if len(failures) > 0 {
		if data, err := json.Marshal(failures); err == nil {
			audit.AddAnnotation(ctx, "validation.policy.admission.k8s.io/validation_failure", string(data))
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return deniedError(a, denied[0])
}

// validationFailure is one entry of the validation_failure audit annotation.
type validationFailure struct {
	Message           string                 `json:"message"`
	Policy            string                 `json:"policy"`
	Binding           string                 `json:"binding"`
	ExpressionIndex   int                    `json:"expressionIndex"`
	ValidationActions []api.ValidationAction `json:"validationActions"`
}

// deniedError is kube's refusal: "RESOURCE "NAME" is forbidden:
// ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MESSAGE",
// with the validation's reason (Invalid by default) and its code.
func deniedError(a *admission.Attributes, d decision) error {
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	if d.binding == "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	name := a.Name
	if name == "" && a.Object != nil {
		m := a.Object.GetObjectMeta()
		name = m.Name
		if name == "" {
			name = m.GenerateName
		}
	}
	if name == "" {
		name = "Unknown"
	}
	err := apierrors.NewForbidden(apierrors.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}, name, errors.New(msg))
	reason := api.StatusReason(d.reason)
	if reason == "" {
		reason = api.StatusReasonInvalid
	}
	err.ErrStatus.Reason = reason
	err.ErrStatus.Code = reasonCode(reason)
	if err.ErrStatus.Details == nil {
		err.ErrStatus.Details = &api.StatusDetails{}
	}
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, api.StatusCause{Message: msg})
	return err
}

func reasonCode(r api.StatusReason) int32 {
	switch r {
	case api.StatusReasonForbidden:
		return 403
	case api.StatusReasonUnauthorized:
		return 401
	case "RequestEntityTooLarge":
		return 413
	}
	return 422
}

// params collects a binding's parameter objects as kube's CollectParams
// does: none needed without paramKind (one evaluation without params),
// by name or selector, in the paramRef's namespace or the request's.
func (pl *Plugin) params(p *api.ValidatingAdmissionPolicy, b *api.ValidatingAdmissionPolicyBinding, reqNS string) ([]runtime.Object, error) {
	return collectParams(pl.cfg.Params, p.Spec.ParamKind, b.Spec.ParamRef, reqNS)
}

// collectParams is kube's CollectParams for a policy's paramKind pk and a
// binding's paramRef ref.
func collectParams(params Params, pk *api.ParamKind, ref *api.ParamRef, reqNS string) ([]runtime.Object, error) {
	if pk == nil || ref == nil {
		return []runtime.Object{nil}, nil
	}
	kpk := admissionregistrationv1.ParamKind{APIVersion: pk.APIVersion, Kind: pk.Kind}
	if params == nil {
		return nil, fmt.Errorf("paramKind kind `%v` not known", kpk.String())
	}
	info, ok := params.ParamResource(pk.APIVersion, pk.Kind)
	if !ok {
		return nil, fmt.Errorf("paramKind kind `%v` not known", kpk.String())
	}
	ns := ""
	if info.Namespaced {
		ns = reqNS
		if ref.Namespace != "" {
			ns = ref.Namespace
		} else if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	sel := labels.Everything()
	if ref.Name == "" {
		if ref.Selector == nil {
			return nil, errors.New("one of name or selector must be provided")
		}
		s, err := labels.SelectorFromLabelSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		sel = s
	}
	objs, err := params.ParamObjects(info, ns, ref.Name, sel)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		if ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == api.ParameterNotFoundDeny {
			return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
		}
		return nil, nil
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		u, err := toUnstructured(o, info)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// evaluation is what the CEL libraries need of a request, built once per
// request.
type evaluation struct {
	attrs     *k8sadmission.VersionedAttributes
	resource  schema.GroupVersionResource
	namespace *corev1.Namespace
}

func (pl *Plugin) newEvaluation(ctx context.Context, a *admission.Attributes, t *matching.Target) (*evaluation, error) {
	return newEvaluation(ctx, pl.cfg.Namespaces, a, t)
}

func newEvaluation(ctx context.Context, namespaces matching.Namespaces, a *admission.Attributes, t *matching.Target) (*evaluation, error) {
	attrs, gvr, err := versionedAttributes(a, t)
	if err != nil {
		return nil, err
	}
	ev := &evaluation{attrs: attrs, resource: gvr}
	// namespaceObject: the request's namespace, none for a Namespace itself.
	isNamespace := a.Resource.Group == "" && a.Resource.Resource == "namespaces"
	if a.Namespace != "" && !isNamespace {
		ns, found, err := namespaces.Namespace(ctx, a.Namespace)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if found {
			if ev.namespace, err = convert[corev1.Namespace](ns); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
	}
	return ev, nil
}

// versionedAttributes is a request as k8s.io/apiserver's CEL libraries
// read it: unstructured objects of the target's kind.
func versionedAttributes(a *admission.Attributes, t *matching.Target) (*k8sadmission.VersionedAttributes, schema.GroupVersionResource, error) {
	obj, old := a.Object, a.OldObject
	if t.ToTarget != nil {
		if obj != nil {
			obj = t.ToTarget(obj)
		}
		if old != nil {
			old = t.ToTarget(old)
		}
	}
	var uObj, uOld runtime.Object
	var err error
	gvr := schema.GroupVersionResource{Group: t.Resource.Group, Version: t.Resource.Version, Resource: t.Resource.Resource}
	if obj != nil {
		if uObj, err = toUnstructured(obj, t.Resource); err != nil {
			return nil, gvr, apierrors.NewInternalError(err)
		}
	}
	if old != nil {
		if uOld, err = toUnstructured(old, t.Resource); err != nil {
			return nil, gvr, apierrors.NewInternalError(err)
		}
	}
	gvk := schema.GroupVersionKind{Group: t.Resource.Group, Version: t.Resource.Version, Kind: t.Resource.Kind}
	if obj != nil {
		if tm := obj.GetTypeMeta(); tm.Kind != "" && tm.APIVersion != "" {
			gvk = schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
		}
	}
	var u user.Info = &user.DefaultInfo{}
	if a.User != nil {
		u = &user.DefaultInfo{Name: a.User.Name, UID: a.User.UID, Groups: a.User.Groups, Extra: a.User.Extra}
	}
	var opts runtime.Object
	switch a.Operation {
	case admission.Create:
		opts = &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{Kind: "CreateOptions", APIVersion: "meta.k8s.io/v1"}}
	case admission.Update:
		opts = &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"}}
	case admission.Delete:
		opts = &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}}
	}
	attrs := k8sadmission.NewAttributesRecord(uObj, uOld, gvk, a.Namespace, a.Name, gvr, t.Subresource,
		k8sadmission.Operation(a.Operation), opts, a.DryRun, u)
	va := &k8sadmission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk}
	if uOld != nil {
		va.VersionedOldObject.Set(uOld)
	}
	if uObj != nil {
		va.VersionedObject.Set(uObj)
	}
	return va, gvr, nil
}

// toUnstructured is obj as the unstructured object CEL reads, with its
// apiVersion and kind.
func toUnstructured(obj api.Object, r api.ResourceInfo) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	// Whole numbers as int64, as kube's unstructured objects hold them:
	// CEL has no int-and-double arithmetic (object.spec.replicas % 2).
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		u.SetKind(r.Kind)
		u.SetAPIVersion(r.GroupVersion())
	}
	return u, nil
}
