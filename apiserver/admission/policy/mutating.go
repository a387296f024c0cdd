package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/authz"
)

// MutatingSource lists mutating admission policies and their bindings,
// sorted by name, from the watch caches; the objects are shared, never
// modified.
type MutatingSource interface {
	MutatingAdmissionPolicies() []*api.MutatingAdmissionPolicy
	MutatingAdmissionPolicyBindings() []*api.MutatingAdmissionPolicyBinding
}

// MutatingConfig is what the MutatingAdmissionPolicy plugin needs.
type MutatingConfig struct {
	Source     MutatingSource
	Params     Params
	Namespaces matching.Namespaces
	// Authorizer answers the expressions' authorizer variable.
	Authorizer authz.Authorizer
	Logger     *slog.Logger
}

// Mutating is the MutatingAdmissionPolicy admission plugin: the CEL
// mutations (apply configurations merged as server-side apply merges them,
// JSON patches) of the policies that match a request through one of their
// bindings, in policy-name and binding-name order, as kube-apiserver
// applies them before the mutating webhooks.
type Mutating struct {
	cfg MutatingConfig
	log *slog.Logger

	mu       sync.Mutex
	compiled map[string]*compiledMutating // by policy name
}

// compiledMutating is a policy's evaluators as of one resourceVersion.
type compiledMutating struct {
	rv       string
	matcher  matchconditions.Matcher
	patchers []patch.Patcher
	compiler *plugincel.CompositedCompiler
	err      error
}

var _ admission.Mutator = (*Mutating)(nil)

// NewMutating returns the MutatingAdmissionPolicy plugin.
func NewMutating(cfg MutatingConfig) *Mutating {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Mutating{cfg: cfg, log: log.With("component", "mutating-admission-policy"), compiled: map[string]*compiledMutating{}}
}

// Name implements admission.Plugin.
func (*Mutating) Name() string { return "MutatingAdmissionPolicy" }

// Handles implements admission.Plugin: only creates and updates carry an
// object to mutate (kube's patchers skip the others).
func (*Mutating) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// compileMutating builds a policy's evaluators as kube's compilePolicy
// does: variables, match conditions, and one patcher per mutation in
// order; compilation errors surface when the policy is used.
func compileMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) *compiledMutating {
	envOnce.Do(func() { envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()) })
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(envSet)
	if err != nil {
		return &compiledMutating{err: fmt.Errorf("failed to initialize CEL compiler: %w", err)}
	}
	variables := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, opts, environment.StoredExpressions)
	c := &compiledMutating{compiler: compiler}
	if mc := p.Spec.MatchConditions; len(mc) > 0 {
		acc := make([]plugincel.ExpressionAccessor, len(mc))
		for i := range mc {
			acc[i] = (*matchconditions.MatchCondition)(&mc[i])
		}
		c.matcher = matchconditions.NewMatcher(compiler.CompileCondition(acc, opts, environment.StoredExpressions),
			p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			ev := compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOpts, environment.StoredExpressions)
			c.patchers = append(c.patchers, patch.NewJSONPatcher(ev))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			ev := compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchOpts, environment.StoredExpressions)
			c.patchers = append(c.patchers, patch.NewApplyConfigurationPatcher(ev))
		default:
			// Validation refuses such a mutation; one stored anyway does nothing.
			c.patchers = append(c.patchers, nil)
		}
	}
	return c
}

func (pl *Mutating) policyFor(p *api.MutatingAdmissionPolicy) (*compiledMutating, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if c, ok := pl.compiled[p.Name]; ok && c.rv == p.ResourceVersion {
		return c, nil
	}
	kp, err := convert[admissionregistrationv1.MutatingAdmissionPolicy](p)
	if err != nil {
		return nil, err
	}
	c := compileMutating(kp)
	c.rv = p.ResourceVersion
	pl.compiled[p.Name] = c
	return c, nil
}

// policyError is a policy that could not be applied: it refuses the
// request unless its failurePolicy is Ignore.
type policyError struct {
	policy  *api.MutatingAdmissionPolicy
	binding string
	err     error
}

func (e policyError) message() string {
	if e.binding != "" {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy.Name, e.binding, e.err)
	}
	return fmt.Sprintf("policy %q denied request: %s", e.policy.Name, e.err)
}

// Admit applies the mutations of every policy matching a through each of
// its bindings that matches it, one after the other on the object the
// previous one left, and writes the result back to a.Object.
func (pl *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Object == nil || matching.Exempt(a) {
		return nil
	}
	policies := pl.cfg.Source.MutatingAdmissionPolicies()
	if len(policies) == 0 {
		return nil
	}
	bindings := pl.cfg.Source.MutatingAdmissionPolicyBindings()
	if len(bindings) == 0 {
		return nil
	}
	r := a.Reinvocations(pl.Name())
	r.Begin(a)
	defer r.End(a)
	var failures []policyError
	var ev *evaluation
	var target *matching.Target
	for _, p := range policies {
		if p.Spec.MatchConstraints == nil {
			continue
		}
		t, err := matching.MatchResources(ctx, pl.cfg.Namespaces, p.Spec.MatchConstraints, a)
		if err != nil {
			failures = append(failures, policyError{policy: p, err: fmt.Errorf("failed to configure policy: %w", err)})
			continue
		}
		if t == nil {
			continue
		}
		compiled, err := pl.policyFor(p)
		if err != nil {
			failures = append(failures, policyError{policy: p, err: fmt.Errorf("failed to configure policy: %w", err)})
			continue
		}
		for _, b := range bindings {
			if b.Spec.PolicyName != p.Name {
				continue
			}
			if m := b.Spec.MatchResources; m != nil {
				bt, err := matching.MatchResources(ctx, pl.cfg.Namespaces, m, a)
				if err != nil {
					failures = append(failures, policyError{policy: p, binding: b.Name, err: fmt.Errorf("failed to configure binding: %w", err)})
					continue
				}
				if bt == nil {
					continue
				}
			}
			params, err := collectParams(pl.cfg.Params, p.Spec.ParamKind, b.Spec.ParamRef, a.Namespace)
			if err != nil {
				failures = append(failures, policyError{policy: p, binding: b.Name, err: fmt.Errorf("failed to configure binding: %w", err)})
				continue
			}
			if compiled.err != nil {
				failures = append(failures, policyError{policy: p, binding: b.Name, err: compiled.err})
				continue
			}
			if ev == nil || target == nil || !sameTarget(target, t) {
				if ev != nil {
					// A policy matched through another kind: carry the
					// mutations so far over before reading the object again.
					if err := pl.writeBack(a, target, ev, r); err != nil {
						return err
					}
				}
				if ev, err = newEvaluation(ctx, pl.cfg.Namespaces, a, t); err != nil {
					return err
				}
				target = t
			}
			for _, param := range params {
				if err := pl.mutate(ctx, p, b.Name, compiled, ev, a, param, r); err != nil {
					var se *apierrors.StatusError
					if errors.As(err, &se) {
						return err
					}
					failures = append(failures, policyError{policy: p, binding: b.Name, err: err})
				}
			}
		}
	}
	if ev != nil {
		if err := pl.writeBack(a, target, ev, r); err != nil {
			return err
		}
	}
	return refusal(a, failures)
}

func sameTarget(a, b *matching.Target) bool {
	return a.Resource.Group == b.Resource.Group && a.Resource.Version == b.Resource.Version &&
		a.Resource.Resource == b.Resource.Resource && a.Subresource == b.Subresource
}

// mutate runs one policy's match conditions and mutations, through one
// binding with one param, on the versioned object of ev. In the admission
// chain's second pass only an invocation r says must run again does; one
// whose policy is reinvocationPolicy IfNeeded is recorded as run, and a
// change it made makes those recorded before it run again (kube's
// reinvocation of mutating admission policies).
func (pl *Mutating) mutate(ctx context.Context, p *api.MutatingAdmissionPolicy, binding string, c *compiledMutating, ev *evaluation,
	a *admission.Attributes, param runtime.Object, r *admission.Reinvocations) error {
	if c.compiler != nil {
		ctx = c.compiler.CreateContext(ctx)
	}
	az := unconditional(pl.cfg.Authorizer)
	if c.matcher != nil {
		res := c.matcher.Match(ctx, ev.attrs, param, az)
		if res.Error != nil {
			return res.Error
		}
		if !res.Matches {
			return nil
		}
	}
	key := p.Name + "/" + binding
	if param != nil {
		if m, err := meta.Accessor(param); err == nil {
			key += "/" + m.GetNamespace() + "/" + m.GetName()
		}
	}
	if r.Skip(a, key) {
		return nil
	}
	before := ev.attrs.VersionedObject.Object()
	defer func() {
		r.Ran(a, key, !apiequality.Semantic.DeepEqual(before, ev.attrs.VersionedObject.Object()),
			p.Spec.ReinvocationPolicy == api.ReinvocationIfNeeded)
	}()
	if a.TypeConverter == nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("Resource kind %s not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.", ev.attrs.VersionedKind))
	}
	oi := objectInterfaces()
	for i, pt := range c.patchers {
		if pt == nil || ev.attrs.VersionedObject.Object() == nil {
			continue
		}
		req := patch.Request{MatchedResource: ev.resource, VersionedAttributes: ev.attrs, ObjectInterfaces: oi,
			OptionalVariables: plugincel.OptionalVariableBindings{VersionedParams: param, Authorizer: az},
			Namespace:         ev.namespace, TypeConverter: a.TypeConverter}
		out, err := pt.Patch(ctx, req, celconfig.RuntimeCELCostBudget)
		if err != nil {
			return err
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("mutation %d of policy %q: %w", i, p.Name, err))
		}
		ev.attrs.UpdateObject(&unstructured.Unstructured{Object: u})
	}
	return nil
}

// writeBack decodes the mutated versioned object into a.Object (in place),
// defaulted and decoded as an object of the resource, keeping what the
// server set before admission. Any mutation applied (even one that changed
// nothing) asks for the chain's second pass, as kube's dispatcher does.
func (pl *Mutating) writeBack(a *admission.Attributes, t *matching.Target, ev *evaluation, r *admission.Reinvocations) error {
	if !ev.attrs.Dirty {
		return nil
	}
	r.Changed(a)
	obj := ev.attrs.VersionedObject.Object()
	if obj == nil {
		return nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var patched api.Object
	if t.ToTarget != nil {
		patched = t.Resource.New()
	} else {
		patched = reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(api.Object)
	}
	if err := json.Unmarshal(data, patched); err != nil {
		return apierrors.NewInternalError(err)
	}
	defaults.Default(patched)
	if t.FromTarget != nil {
		patched = t.FromTarget(patched)
	}
	if a.Decode != nil {
		a.Decode(patched)
	}
	dst, src := reflect.ValueOf(a.Object), reflect.ValueOf(patched)
	if dst.Type() != src.Type() {
		return apierrors.NewInternalError(fmt.Errorf("mutating admission policy: mutated %T is not a %T", patched, a.Object))
	}
	if before, after := a.Object.GetObjectMeta(), patched.GetObjectMeta(); before != nil && after != nil {
		if err := admission.KeepServerFields(before, after); err != nil {
			return err
		}
	}
	dst.Elem().Set(src.Elem())
	return nil
}

// refusal is kube's answer to policies that failed with failurePolicy
// Fail (the default): 403 "RESOURCE "NAME" is forbidden: policy 'P' with
// binding 'B' denied request: ERROR", one cause per failure.
func refusal(a *admission.Attributes, failures []policyError) error {
	var kept []policyError
	for _, f := range failures {
		if fp := f.policy.Spec.FailurePolicy; fp != nil && *fp == api.FailurePolicyIgnore {
			continue
		}
		kept = append(kept, f)
	}
	if len(kept) == 0 {
		return nil
	}
	name := a.Name
	if name == "" && a.Object != nil {
		if m := a.Object.GetObjectMeta(); m != nil {
			name = m.Name
			if name == "" {
				name = m.GenerateName
			}
		}
	}
	msg := kept[0].message()
	err := apierrors.NewForbidden(apierrors.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}, name, errors.New("admission request denied by policy"))
	// kube keeps NewForbidden's code and details but the first failure's
	// message, and its reason: Invalid for every failure of a mutation.
	err.ErrStatus.Message = msg
	err.ErrStatus.Reason = api.StatusReasonInvalid
	if err.ErrStatus.Details == nil {
		err.ErrStatus.Details = &api.StatusDetails{}
	}
	for _, f := range kept {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, api.StatusCause{Message: f.message()})
	}
	return err
}

var (
	oiOnce sync.Once
	oi     k8sadmission.ObjectInterfaces
)

// objectInterfaces are what the JSON patcher needs to encode and decode
// the (always unstructured) versioned object.
func objectInterfaces() k8sadmission.ObjectInterfaces {
	oiOnce.Do(func() {
		scheme := runtime.NewScheme()
		metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
		oi = k8sadmission.NewObjectInterfacesFromScheme(scheme)
	})
	return oi
}
