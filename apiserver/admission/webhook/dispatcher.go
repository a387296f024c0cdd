package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/defaults"
	apipatch "github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// A webhook's JSON patch is held to the copy limit of a client's
// (api/patch.MaxJSONPatchCopyBytes), as in kube-apiserver, which sets this
// library's limit for the whole process: without it a 1 KB patch of
// doubling copies builds gigabytes before anything looks at its size.
func init() {
	jsonpatch.AccumulatedCopySizeLimit = apipatch.MaxJSONPatchCopyBytes
}

// Config is what the webhook plugins need.
type Config struct {
	Source     Source
	Namespaces matching.Namespaces
	// Resolver reaches webhooks given as a Service; without one they fail
	// (and their failure policy applies).
	Resolver ServiceResolver
	// Authorizer answers matchConditions' authorizer variable.
	Authorizer authz.Authorizer
	Logger     *slog.Logger
}

// dispatcher calls webhooks; the two plugins share one.
type dispatcher struct {
	source     Source
	namespaces matching.Namespaces
	resolver   ServiceResolver
	authorizer authz.Authorizer
	clients    clients
	metrics    *metrics
	log        *slog.Logger

	mu sync.Mutex
	// conditions are the compiled matchConditions by hook kind and id,
	// pruned to the current configurations by retainConditions.
	conditions map[string]map[string]*compiledConditions
}

// New returns the MutatingAdmissionWebhook and ValidatingAdmissionWebhook
// plugins, sharing their HTTP clients.
func New(cfg Config) (*Mutating, *Validating) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	d := &dispatcher{source: cfg.Source, namespaces: cfg.Namespaces, resolver: cfg.Resolver, authorizer: cfg.Authorizer, metrics: newMetrics(), log: log.With("component", "admission-webhook")}
	return &Mutating{d: d}, &Validating{d: d}
}

// callError is a webhook that could not be called or answered nonsense,
// which its failure policy decides about (kube's ErrCallingWebhook).
type callError struct {
	name   string
	reason error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.name, e.reason)
}

func (e *callError) Unwrap() error { return e.reason }

// call sends a to h and returns its verified answer. Errors are
// *callError or (a dry run the webhook cannot take) a StatusError.
func (d *dispatcher) call(ctx context.Context, h *hook, a *admission.Attributes, t *matching.Target, mutating bool) (*result, error) {
	if a.DryRun && h.sideEffects != api.SideEffectClassNone && h.sideEffects != api.SideEffectClassNoneOnDryRun {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
	}
	version, ok := reviewAPIVersion(h.reviewVersions)
	if !ok {
		return nil, &callError{h.name, fmt.Errorf("webhook does not accept known AdmissionReview versions (v1, v1beta1)")}
	}
	review, err := newReview(a, t, version)
	if err != nil {
		return nil, &callError{h.name, err}
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	var answer admissionv1.AdmissionReview
	if err := d.post(ctx, h, body, &answer); err != nil {
		return nil, &callError{h.name, err}
	}
	res, err := verify(review.Request.UID, version, mutating, &answer)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	for _, w := range res.warnings {
		warning.Add(ctx, w)
	}
	return res, nil
}

// failure decides about a webhook's error: a call error of a webhook that
// ignores failures is logged and dropped; the others refuse the request,
// a call error as an internal error ("failed calling webhook ...").
func (d *dispatcher) failure(h *hook, err error) error {
	var ce *callError
	if !errors.As(err, &ce) {
		return err
	}
	if h.ignoreFailures {
		d.log.Warn("failed calling webhook, failing open", "webhook", h.name, "err", ce)
		return nil
	}
	d.log.Warn("failed calling webhook, failing closed", "webhook", h.name, "err", ce)
	return apierrors.NewInternalError(ce)
}

// Mutating is the MutatingAdmissionWebhook plugin.
type Mutating struct{ d *dispatcher }

var _ admission.Mutator = (*Mutating)(nil)

// Name implements admission.Plugin.
func (*Mutating) Name() string { return "MutatingAdmissionWebhook" }

// Handles implements admission.Plugin: every operation.
func (*Mutating) Handles(admission.Operation) bool { return true }

// Admit calls the matching mutating webhooks in order (configurations by
// name, webhooks as listed), applying each one's patch before calling the
// next. A webhook that changes the object asks the admission chain for a
// second pass, in which only the webhooks with reinvocationPolicy IfNeeded
// that ran before a later change (theirs, another plugin's) are called
// again, as kube's webhook dispatcher.
func (m *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if matching.Exempt(a) {
		return nil
	}
	hooks := mutatingHooks(m.d.source.MutatingWebhookConfigurations())
	m.d.retainConditions(kindMutating, hooks)
	if len(hooks) == 0 {
		return nil
	}
	r := a.Reinvocations(m.Name())
	r.Begin(a)
	defer r.End(a)
	for i := range hooks {
		h := &hooks[i]
		t, err := m.d.match(ctx, h, a)
		if err != nil {
			return err
		}
		if t == nil || r.Skip(a, h.id) {
			continue
		}
		start := time.Now()
		changed, err := m.callAndPatch(ctx, h, a, t)
		m.d.metrics.observe(h, string(a.Operation), time.Since(start), err)
		r.Ran(a, h.id, changed, h.reinvokeIfNeeded)
		if err != nil {
			if err := m.d.failure(h, err); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return apierrors.NewTimeout("request did not complete within requested timeout", 0)
			}
		}
	}
	return nil
}

// callAndPatch calls a mutating webhook and applies its JSON patch to
// a.Object in place; changed reports whether the object is different.
func (m *Mutating) callAndPatch(ctx context.Context, h *hook, a *admission.Attributes, t *matching.Target) (changed bool, err error) {
	res, err := m.d.call(ctx, h, a, t, true)
	if err != nil {
		return false, err
	}
	if !res.allowed {
		return false, denied(h.name, res.status)
	}
	if len(res.patch) == 0 {
		return false, nil
	}
	patch, err := jsonpatch.DecodePatch(res.patch)
	if err != nil {
		return false, &callError{h.name, fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	if len(patch) == 0 {
		return false, nil
	}
	if a.Object == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	current := a.Object
	if t.ToTarget != nil {
		current = t.ToTarget(current)
	}
	before, err := encodeObject(current, t.Resource)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	after, err := patch.Apply(before)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	// The patch applies to the request's own object, which for a
	// subresource or a CONNECT may not be the resource's kind (a
	// TokenRequest, a PodExecOptions), or to the equivalent target's.
	var patched api.Object
	if t.ToTarget != nil {
		patched = t.Resource.New()
	} else {
		patched = reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(api.Object)
	}
	if err := json.Unmarshal(after, patched); err != nil {
		return false, apierrors.NewInternalError(err)
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
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q: patched %T is not a %T", h.name, patched, a.Object))
	}
	if before := a.Object.GetObjectMeta(); before != nil {
		if err := admission.KeepServerFields(before, patched.GetObjectMeta()); err != nil {
			return false, err
		}
	}
	old, _ := json.Marshal(a.Object)
	dst.Elem().Set(src.Elem())
	now, _ := json.Marshal(a.Object)
	return !bytes.Equal(old, now), nil
}

// Validating is the ValidatingAdmissionWebhook plugin.
type Validating struct{ d *dispatcher }

var _ admission.Validator = (*Validating)(nil)

// Name implements admission.Plugin.
func (*Validating) Name() string { return "ValidatingAdmissionWebhook" }

// Handles implements admission.Plugin: every operation.
func (*Validating) Handles(admission.Operation) bool { return true }

// Validate calls the matching validating webhooks in parallel; the first
// refusal (in webhook order) is the answer.
func (v *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	if matching.Exempt(a) {
		return nil
	}
	hooks := validatingHooks(v.d.source.ValidatingWebhookConfigurations())
	v.d.retainConditions(kindValidating, hooks)
	type call struct {
		h *hook
		t *matching.Target
	}
	var calls []call
	for i := range hooks {
		t, err := v.d.match(ctx, &hooks[i], a)
		if err != nil {
			return err
		}
		if t != nil {
			calls = append(calls, call{&hooks[i], t})
		}
	}
	if len(calls) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return apierrors.NewTimeout("request did not complete within requested timeout", 0)
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = apierrors.NewInternalError(fmt.Errorf("ValidatingAdmissionWebhook/%v has panicked: %v", c.h.name, r))
				}
			}()
			start := time.Now()
			res, err := v.d.call(ctx, c.h, a, c.t, false)
			if err == nil && !res.allowed {
				err = denied(c.h.name, res.status)
			}
			v.d.metrics.observe(c.h, string(a.Operation), time.Since(start), err)
			if err != nil {
				errs[i] = v.d.failure(c.h, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
