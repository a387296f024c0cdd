package validation

import (
	"fmt"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/naming"
)

// ValidateJob checks a job being created.
func ValidateJob(j *api.Job) field.ErrorList {
	errs := ValidateObjectMeta(&j.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateGeneratedSelector(j)...)
	return append(errs, validateJobSpec(&j.Spec, field.NewPath("spec"))...)
}

// validateGeneratedSelector: unless manualSelector is true, the template
// carries the generated labels and the selector matches them.
func validateGeneratedSelector(j *api.Job) field.ErrorList {
	if (j.Spec.ManualSelector != nil && *j.Spec.ManualSelector) || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	tp := field.NewPath("spec", "template", "metadata")
	for _, l := range []struct{ key, want string }{
		{api.LegacyJobControllerUIDLabel, string(j.UID)},
		{api.JobControllerUIDLabel, string(j.UID)},
		{api.LegacyJobNameLabel, j.Name},
		{api.JobNameLabel, j.Name},
	} {
		got, ok := j.Spec.Template.Labels[l.key]
		switch {
		case !ok:
			errs = append(errs, field.Required(tp.Child("labels").Key(l.key), fmt.Sprintf("must be '%s'", l.want)))
		case got != l.want:
			errs = append(errs, field.Invalid(tp.Child("labels").Key(l.key), jsonValue{j.Spec.Template.Labels}, fmt.Sprintf("must be '%s'", l.want)))
		}
	}
	expected := labels.Set{api.JobControllerUIDLabel: string(j.UID), api.JobNameLabel: j.Name}
	if s, err := labels.SelectorFromLabelSelector(j.Spec.Selector); err == nil && !s.Matches(expected) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), jsonValue{j.Spec.Selector}, "`selector` not auto-generated"))
	}
	return errs
}

func validateJobSpec(spec *api.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		v    *int32
		name string
	}{{spec.Parallelism, "parallelism"}, {spec.Completions, "completions"}, {spec.BackoffLimit, "backoffLimit"},
		{spec.TTLSecondsAfterFinished, "ttlSecondsAfterFinished"}, {spec.BackoffLimitPerIndex, "backoffLimitPerIndex"},
		{spec.MaxFailedIndexes, "maxFailedIndexes"}} {
		if f.v != nil {
			errs = append(errs, validateNonnegative(int64(*f.v), p.Child(f.name))...)
		}
	}
	if spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, validateNonnegative(*spec.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	if cm := spec.CompletionMode; cm != nil {
		switch *cm {
		case api.NonIndexedCompletion:
		case api.IndexedCompletion:
			if spec.Completions == nil {
				errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", api.IndexedCompletion)))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("completionMode"), string(*cm), []string{"Indexed", "NonIndexed"}))
		}
	}
	indexed := spec.CompletionMode != nil && *spec.CompletionMode == api.IndexedCompletion
	if spec.BackoffLimitPerIndex != nil && !indexed {
		errs = append(errs, field.Forbidden(p.Child("backoffLimitPerIndex"), "requires indexed completion mode"))
	}
	if spec.MaxFailedIndexes != nil && spec.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if spec.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, ValidateLabelSelector(spec.Selector, LabelSelectorOptions{}, p.Child("selector"))...)
	}
	tp := p.Child("template")
	if s, err := labels.SelectorFromLabelSelector(spec.Selector); err == nil && spec.Selector != nil && !s.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), jsonValue{spec.Template.Labels}, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(&spec.Template, tp)...)
	if rp := spec.Template.Spec.RestartPolicy; rp != api.RestartPolicyOnFailure && rp != api.RestartPolicyNever {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(rp), []string{"OnFailure", "Never"}))
	}
	if pfp := spec.PodFailurePolicy; pfp != nil {
		errs = append(errs, validatePodFailurePolicy(pfp, spec, p.Child("podFailurePolicy"))...)
	}
	return errs
}

// validatePodFailurePolicy checks the shape of a pod failure policy; the
// job controller decides how much of it it honours.
func validatePodFailurePolicy(pfp *api.PodFailurePolicy, spec *api.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Template.Spec.RestartPolicy != api.RestartPolicyNever {
		errs = append(errs, field.Invalid(field.NewPath("spec", "template", "spec", "restartPolicy"), string(spec.Template.Spec.RestartPolicy),
			"only \"Never\" is supported when podFailurePolicy is specified"))
	}
	actions := []string{"Count", "FailIndex", "FailJob", "Ignore"}
	for i, r := range pfp.Rules {
		rp := p.Child("rules").Index(i)
		if !slices.Contains(actions, string(r.Action)) {
			errs = append(errs, field.NotSupported(rp.Child("action"), string(r.Action), actions))
		}
		switch {
		case r.OnExitCodes != nil && len(r.OnPodConditions) > 0:
			errs = append(errs, field.Invalid(rp, field.OmitValue, "specifying both OnExitCodes and OnPodConditions is not supported"))
		case r.OnExitCodes == nil && len(r.OnPodConditions) == 0:
			errs = append(errs, field.Invalid(rp, field.OmitValue, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
		if ec := r.OnExitCodes; ec != nil {
			ep := rp.Child("onExitCodes")
			if ec.Operator != "In" && ec.Operator != "NotIn" {
				errs = append(errs, field.NotSupported(ep.Child("operator"), ec.Operator, []string{"In", "NotIn"}))
			}
			if len(ec.Values) == 0 {
				errs = append(errs, field.Required(ep.Child("values"), "at least one value is required"))
			}
			for j, v := range ec.Values {
				if ec.Operator == "In" && v == 0 {
					errs = append(errs, field.Invalid(ep.Child("values").Index(j), v, "must not be 0 for the In operator"))
				}
			}
		}
		for j, c := range r.OnPodConditions {
			cp := rp.Child("onPodConditions").Index(j)
			switch c.Status {
			case api.ConditionTrue, api.ConditionFalse, api.ConditionUnknown:
			default:
				errs = append(errs, field.NotSupported(cp.Child("status"), string(c.Status), []string{"False", "True", "Unknown"}))
			}
			errs = append(errs, validateQualifiedName(string(c.Type), cp.Child("type"))...)
		}
	}
	return errs
}

// ValidateJobUpdate checks a job update: completions, selector and pod
// template are immutable.
func ValidateJobUpdate(j, old *api.Job) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("spec")
	errs = append(errs, validateJobSpec(&j.Spec, p)...)
	errs = append(errs, validateImmutable(j.Spec.Completions, old.Spec.Completions, p.Child("completions"))...)
	errs = append(errs, validateImmutable(j.Spec.Selector, old.Spec.Selector, p.Child("selector"))...)
	errs = append(errs, validateImmutable(j.Spec.CompletionMode, old.Spec.CompletionMode, p.Child("completionMode"))...)
	if !semanticEqual(j.Spec.Template, old.Spec.Template) {
		errs = append(errs, field.Invalid(p.Child("template"), goValue{j.Spec.Template}, fieldImmutableErrorMsg))
	}
	return errs
}

// ValidateJobStatusUpdate checks a write to jobs/status.
func ValidateJobStatusUpdate(j, old *api.Job) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&j.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := j.Status, field.NewPath("status")
	for _, f := range []struct {
		v    int32
		name string
	}{{st.Active, "active"}, {st.Succeeded, "succeeded"}, {st.Failed, "failed"}} {
		errs = append(errs, validateNonnegative(int64(f.v), p.Child(f.name))...)
	}
	for _, f := range []struct {
		v    *int32
		name string
	}{{st.Ready, "ready"}, {st.Terminating, "terminating"}} {
		if f.v != nil {
			errs = append(errs, validateNonnegative(int64(*f.v), p.Child(f.name))...)
		}
	}
	if st.CompletionTime != nil && st.StartTime != nil && st.CompletionTime.Before(st.StartTime.Time) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), st.CompletionTime.String(), "completionTime cannot be set before startTime"))
	}
	return errs
}
