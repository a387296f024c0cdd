package validation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/api/resource"
)

// HorizontalPodAutoscalers are checked as kube-apiserver v1.37 checks them
// (pkg/apis/autoscaling/validation and the declarative rules of
// autoscaling/v2): the hand-written checks in their order, less those the
// declarative rules at beta have taken over (the replica bounds), whose
// errors follow them. HPAScaleToZero and HPAConfigurableTolerance are on,
// as in v1.37: minReplicas may be 0 when an Object or External metric
// says when to wake up, and a behavior may carry tolerances.

const (
	hpaMaxPeriodSeconds              = 1800
	hpaMaxStabilizationWindowSeconds = 3600
)

var (
	hpaMetricSourceTypes = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}
	hpaSelectPolicies    = []string{"Disabled", "Max", "Min"}
	hpaPolicyTypes       = []string{"Percent", "Pods"}
)

// hpaMetricSource holds the fields of every autoscaling/v2 metric source
// (package api keeps them as raw JSON): name and container for the
// resource kinds, metric and describedObject for the others.
type hpaMetricSource struct {
	Name      string `json:"name"`
	Container string `json:"container"`
	Metric    struct {
		Name string `json:"name"`
	} `json:"metric"`
	DescribedObject api.CrossVersionObjectReference `json:"describedObject"`
	Target          hpaMetricTarget                 `json:"target"`
}

type hpaMetricTarget struct {
	Type               string             `json:"type"`
	Value              *resource.Quantity `json:"value"`
	AverageValue       *resource.Quantity `json:"averageValue"`
	AverageUtilization *int32             `json:"averageUtilization"`
}

// hpaRefOptions are kube's CrossVersionObjectReferenceValidationOptions.
type hpaRefOptions struct {
	allowEmptyAPIGroup, allowInvalidAPIVersion bool
}

func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// decodeHPAPart decodes a part of the spec package api keeps raw; one that
// does not decode is an Invalid error at its path.
func decodeHPAPart[T any](raw json.RawMessage, p *field.Path, errs *field.ErrorList) (*T, bool) {
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		*errs = append(*errs, field.Invalid(p, string(raw), err.Error()))
		return nil, false
	}
	return v, true
}

func validateHorizontalPodAutoscalerSpec(s, old *api.HorizontalPodAutoscalerSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}

	// kube's validationOptionsForHorizontalPodAutoscaler.
	targetOpts := hpaRefOptions{}
	switch {
	case old != nil && old.ScaleTargetRef.APIVersion == s.ScaleTargetRef.APIVersion && old.ScaleTargetRef.Kind == s.ScaleTargetRef.Kind:
		targetOpts.allowInvalidAPIVersion = true
	case s.ScaleTargetRef.Kind == "ReplicationController":
		targetOpts.allowEmptyAPIGroup = true
	}
	objectOpts := hpaRefOptions{allowEmptyAPIGroup: true}
	if old != nil {
		for _, m := range old.Metrics {
			if m.Type != "Object" || !present(m.Object) {
				continue
			}
			var src hpaMetricSource
			if json.Unmarshal(m.Object, &src) == nil && hpaAPIVersionError(src.DescribedObject, objectOpts) != "" {
				objectOpts.allowInvalidAPIVersion = true
				break
			}
		}
	}
	errs = append(errs, validateCrossVersionObjectReference(s.ScaleTargetRef, p.Child("scaleTargetRef"), targetOpts)...)
	errs = append(errs, validateHPAMetrics(s.Metrics, s.MinReplicas, p.Child("metrics"), objectOpts)...)
	if b := s.Behavior; b != nil {
		errs = append(errs, validateHPAScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateHPAScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}

	// The declarative rules (beta, so enforced in place of the hand-written
	// checks); a bound an update leaves as it was is not checked again.
	if s.MinReplicas != nil && *s.MinReplicas < 0 && (old == nil || old.MinReplicas == nil || *old.MinReplicas != *s.MinReplicas) {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, "must be greater than or equal to 0"))
	}
	if old == nil || old.MaxReplicas != s.MaxReplicas {
		switch {
		case s.MaxReplicas == 0:
			errs = append(errs, field.Required(p.Child("maxReplicas"), ""))
		case s.MaxReplicas < 1:
			errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to 1"))
		}
	}
	return errs
}

func validateCrossVersionObjectReference(ref api.CrossVersionObjectReference, p *field.Path, opts hpaRefOptions) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
			continue
		}
		for _, msg := range naming.IsValidPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	if msg := hpaAPIVersionError(ref, opts); msg != "" {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, msg))
	}
	return errs
}

// hpaAPIVersionError is kube's ValidateAPIVersion: apiVersion parses as a
// group version (schema.ParseGroupVersion) and names a group unless the
// options allow the core group.
func hpaAPIVersionError(ref api.CrossVersionObjectReference, opts hpaRefOptions) string {
	if opts.allowInvalidAPIVersion {
		return ""
	}
	v := ref.APIVersion
	group := ""
	switch {
	case v == "" || v == "/":
	case strings.Count(v, "/") > 1:
		return "unexpected GroupVersion string: " + v
	case strings.Contains(v, "/"):
		group, _, _ = strings.Cut(v, "/")
	}
	if !opts.allowEmptyAPIGroup && group == "" {
		return "apiVersion must specify API group"
	}
	return ""
}

func validateHPAMetrics(metrics []api.MetricSpec, minReplicas *int32, p *field.Path, opts hpaRefOptions) field.ErrorList {
	var errs field.ErrorList
	wakes := false
	for i, m := range metrics {
		errs = append(errs, validateHPAMetricSpec(m, p.Index(i), opts)...)
		wakes = wakes || m.Type == "Object" || m.Type == "External"
	}
	if minReplicas != nil && *minReplicas == 0 && !wakes {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

func validateHPAMetricSpec(m api.MetricSpec, p *field.Path, opts hpaRefOptions) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !slices.Contains(hpaMetricSourceTypes, m.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, hpaMetricSourceTypes))
	}
	// The sources given, in kube's order; only the first is checked.
	sources := []struct {
		name     string
		raw      json.RawMessage
		validate func(*hpaMetricSource, *field.Path) field.ErrorList
	}{
		{"object", m.Object, func(s *hpaMetricSource, p *field.Path) field.ErrorList { return validateHPAObjectSource(s, p, opts) }},
		{"external", m.External, validateHPAExternalSource},
		{"pods", m.Pods, validateHPAPodsSource},
		{"resource", m.Resource, validateHPAResourceSource},
		{"containerResource", m.ContainerResource, validateHPAContainerResourceSource},
	}
	var given []string
	for _, src := range sources {
		if !present(src.raw) {
			continue
		}
		given = append(given, src.name)
		if len(given) == 1 {
			if s, ok := decodeHPAPart[hpaMetricSource](src.raw, p.Child(src.name), &errs); ok {
				errs = append(errs, src.validate(s, p.Child(src.name))...)
			}
		}
	}
	expected := ""
	switch m.Type {
	case "Object", "Pods", "Resource", "External", "ContainerResource":
		expected = strings.ToLower(m.Type[:1]) + m.Type[1:]
		if !slices.Contains(given, expected) {
			errs = append(errs, field.Required(p.Child(expected), "must populate information for the given metric source"))
		}
	}
	if len(given) != 1 {
		others := slices.DeleteFunc(slices.Clone(given), func(s string) bool { return s == expected })
		slices.Sort(others)
		for _, o := range others {
			errs = append(errs, field.Forbidden(p.Child(o), "must populate the given metric source only"))
		}
	}
	return errs
}

func validateHPAObjectSource(s *hpaMetricSource, p *field.Path, opts hpaRefOptions) field.ErrorList {
	errs := validateCrossVersionObjectReference(s.DescribedObject, p.Child("describedObject"), opts)
	errs = append(errs, validateHPAMetricIdentifier(s.Metric.Name, p.Child("metric"))...)
	errs = append(errs, validateHPAMetricTarget(s.Target, p.Child("target"))...)
	if s.Target.Value == nil && s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateHPAExternalSource(s *hpaMetricSource, p *field.Path) field.ErrorList {
	errs := validateHPAMetricIdentifier(s.Metric.Name, p.Child("metric"))
	errs = append(errs, validateHPAMetricTarget(s.Target, p.Child("target"))...)
	if s.Target.Value == nil && s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if s.Target.Value != nil && s.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validateHPAPodsSource(s *hpaMetricSource, p *field.Path) field.ErrorList {
	errs := validateHPAMetricIdentifier(s.Metric.Name, p.Child("metric"))
	errs = append(errs, validateHPAMetricTarget(s.Target, p.Child("target"))...)
	if s.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateHPAResourceSource(s *hpaMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	return append(errs, validateHPAUtilizationTarget(s.Target, p.Child("target"))...)
}

func validateHPAContainerResourceSource(s *hpaMetricSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, validateContainerResourceName(api.ResourceName(s.Name), p.Child("name"))...)
	}
	if s.Container == "" {
		errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
	} else {
		errs = append(errs, validateDNS1123Label(s.Container, p.Child("container"))...)
	}
	return append(errs, validateHPAUtilizationTarget(s.Target, p.Child("target"))...)
}

// validateHPAUtilizationTarget checks the target of a Resource or
// ContainerResource metric: a utilization or a raw value, not both.
func validateHPAUtilizationTarget(t hpaMetricTarget, p *field.Path) field.ErrorList {
	errs := validateHPAMetricTarget(t, p)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateHPAMetricTarget(t hpaMetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != "Utilization" && t.Type != "Value" && t.Type != "AverageValue" {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateHPAMetricIdentifier(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range naming.IsValidPathSegmentName(name) {
		errs = append(errs, field.Invalid(p.Child("name"), name, msg))
	}
	return errs
}

func validateHPAScalingRules(r *api.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be greater than or equal to zero"))
	}
	if w := r.StabilizationWindowSeconds; w != nil && *w > hpaMaxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w,
			fmt.Sprintf("must be less than or equal to %d", hpaMaxStabilizationWindowSeconds)))
	}
	if sp := r.SelectPolicy; sp != nil && !slices.Contains(hpaSelectPolicies, *sp) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *sp, hpaSelectPolicies))
	}
	policies := p.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(policies, "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		pp := policies.Index(i)
		if !slices.Contains(hpaPolicyTypes, pol.Type) {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, hpaPolicyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero"))
		}
		if pol.PeriodSeconds > hpaMaxPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds,
				fmt.Sprintf("must be less than or equal to %d", hpaMaxPeriodSeconds)))
		}
	}
	if t := r.Tolerance; t != nil && t.Sign() < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), t.String(), isNegativeErrorMsg))
	}
	return errs
}
