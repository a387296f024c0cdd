package validation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/naming"
)

// ValidateJob checks a job being created.
func ValidateJob(j *api.Job) field.ErrorList {
	errs := ValidateObjectMeta(&j.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateGeneratedSelector(j)...)
	errs = append(errs, validateJobSpec(&j.Spec, field.NewPath("spec"))...)
	return append(errs, validateNameAllowsCompletions(j)...)
}

// validateNameAllowsCompletions is kube's: an Indexed job's pods get the
// hostname NAME-INDEX, which must be a DNS label for the last index too.
func validateNameAllowsCompletions(j *api.Job) field.ErrorList {
	if j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != api.IndexedCompletion || j.Spec.Completions == nil || *j.Spec.Completions <= 0 {
		return nil
	}
	hostname := fmt.Sprintf("%s-%d", j.Name, *j.Spec.Completions-1)
	if len(naming.IsDNS1123Label(hostname)) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), j.Name,
		"will not able to create pod with invalid DNS label: "+hostname)}
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

// Kube's limits on Indexed jobs and on the policies of a job.
const (
	maxParallelismForIndexedJob             = 100_000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxManagedByLength                      = 63
	maxSuccessPolicyRules                   = 20
	maxSucceededIndexesLength               = 64 * 1024
)

// validateJobSpec is kube's ValidateJobSpec, its checks in kube's order
// (the causes of a refusal come in that order).
func validateJobSpec(spec *api.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		v    *int32
		name string
	}{{spec.Parallelism, "parallelism"}, {spec.Completions, "completions"}} {
		if f.v != nil {
			errs = append(errs, validateNonnegative(int64(*f.v), p.Child(f.name))...)
		}
	}
	if spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, validateNonnegative(*spec.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	for _, f := range []struct {
		v    *int32
		name string
	}{{spec.BackoffLimit, "backoffLimit"}, {spec.TTLSecondsAfterFinished, "ttlSecondsAfterFinished"},
		{spec.BackoffLimitPerIndex, "backoffLimitPerIndex"}, {spec.MaxFailedIndexes, "maxFailedIndexes"}} {
		if f.v != nil {
			errs = append(errs, validateNonnegative(int64(*f.v), p.Child(f.name))...)
		}
	}
	if spec.MaxFailedIndexes != nil && spec.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if spec.ManagedBy != nil {
		errs = append(errs, domainPrefixedPath(p.Child("managedBy"), *spec.ManagedBy)...)
		if len(*spec.ManagedBy) > maxManagedByLength {
			errs = append(errs, field.TooLong(p.Child("managedBy"), "", maxManagedByLength))
		}
	}
	indexed := spec.CompletionMode != nil && *spec.CompletionMode == api.IndexedCompletion
	if cm := spec.CompletionMode; cm != nil {
		if *cm != api.NonIndexedCompletion && !indexed {
			errs = append(errs, field.NotSupported(p.Child("completionMode"), string(*cm), []string{"NonIndexed", "Indexed"}))
		}
		if indexed {
			errs = append(errs, validateIndexedJobLimits(spec, p)...)
		}
	}
	if !indexed && (spec.CompletionMode == nil || *spec.CompletionMode == api.NonIndexedCompletion) {
		if spec.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	if pfp := spec.PodFailurePolicy; pfp != nil {
		errs = append(errs, validatePodFailurePolicy(pfp, p.Child("podFailurePolicy"))...)
	}
	if sp := spec.SuccessPolicy; sp != nil {
		if !indexed {
			errs = append(errs, field.Invalid(p.Child("successPolicy"), successPolicyValue{sp}, "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(sp, spec.Completions, p.Child("successPolicy"))...)
		}
	}
	if rp := spec.PodReplacementPolicy; rp != nil {
		switch {
		case spec.PodFailurePolicy != nil && *rp != "Failed":
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []string{"Failed"}))
		case spec.PodFailurePolicy == nil && *rp != "Failed" && *rp != "TerminatingOrFailed":
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []string{"Failed", "TerminatingOrFailed"}))
		}
	}
	tp := p.Child("template")
	errs = append(errs, ValidatePodTemplateSpec(&spec.Template, tp)...)
	switch rp := spec.Template.Spec.RestartPolicy; {
	case rp == api.RestartPolicyAlways || rp == "":
		errs = append(errs, field.Required(tp.Child("spec", "restartPolicy"), `valid values: "OnFailure", "Never"`))
	case rp != api.RestartPolicyOnFailure && rp != api.RestartPolicyNever:
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(rp), []string{"OnFailure", "Never"}))
	case spec.PodFailurePolicy != nil && rp != api.RestartPolicyNever:
		errs = append(errs, field.Invalid(tp.Child("spec", "restartPolicy"), string(rp), `only "Never" is supported when podFailurePolicy is specified`))
	}
	if spec.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, ValidateLabelSelector(spec.Selector, LabelSelectorOptions{}, p.Child("selector"))...)
	}
	if s, err := labels.SelectorFromLabelSelector(spec.Selector); err == nil && spec.Selector != nil && !s.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), jsonValue{spec.Template.Labels}, "`selector` does not match template `labels`"))
	}
	return errs
}

// validateIndexedJobLimits are kube's bounds on an Indexed job: its
// completed and failed indexes must stay writable in its status.
func validateIndexedJobLimits(spec *api.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Completions == nil {
		errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", api.IndexedCompletion)))
	}
	if spec.Parallelism != nil && *spec.Parallelism > maxParallelismForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("parallelism"), *spec.Parallelism,
			fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, api.IndexedCompletion)))
	}
	if spec.Completions != nil && spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > *spec.Completions {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "must be less than or equal to completions"))
	}
	if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
			fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if spec.Completions != nil && *spec.Completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
		if spec.MaxFailedIndexes == nil {
			errs = append(errs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		}
		if spec.Parallelism != nil && *spec.Parallelism > parallelismLimitForHighCompletions {
			errs = append(errs, field.Invalid(p.Child("parallelism"), *spec.Parallelism,
				fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", parallelismLimitForHighCompletions, completionsSoftLimit)))
		}
		if spec.MaxFailedIndexes != nil && *spec.MaxFailedIndexes > maxFailedIndexesLimitForHighCompletions {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *spec.MaxFailedIndexes,
				fmt.Sprintf("must be less than or equal to %d when completions are above %d and used with backoff limit per index", maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
		}
	}
	return errs
}

// validateSuccessPolicy is kube's: 1 to 20 rules, each with
// succeededIndexes (well-formed intervals below completions) or
// succeededCount (at most completions, and at most the indexes named).
func validateSuccessPolicy(sp *api.SuccessPolicy, completions *int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	if len(sp.Rules) == 0 {
		errs = append(errs, field.Required(rp, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(sp.Rules) > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rp, len(sp.Rules), maxSuccessPolicyRules))
	}
	if completions == nil {
		// Reported already (Indexed without completions): nothing to
		// measure the rules against.
		return errs
	}
	for i, rule := range sp.Rules {
		ip := rp.Index(i)
		if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
			errs = append(errs, field.Required(ip, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if rule.SucceededIndexes != nil {
			sip := ip.Child("succeededIndexes")
			if len(*rule.SucceededIndexes) > maxSucceededIndexesLength {
				errs = append(errs, field.TooLong(sip, "", maxSucceededIndexesLength))
			}
			var err error
			if total, err = countIndexes(*rule.SucceededIndexes, *completions); err != nil {
				errs = append(errs, field.Invalid(sip, *rule.SucceededIndexes, "error parsing succeededIndexes: "+err.Error()))
			}
		}
		if rule.SucceededCount != nil {
			scp := ip.Child("succeededCount")
			errs = append(errs, validateNonnegative(int64(*rule.SucceededCount), scp)...)
			if *rule.SucceededCount > *completions {
				errs = append(errs, field.Invalid(scp, *rule.SucceededCount,
					fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", *completions)))
			}
			if rule.SucceededIndexes != nil && *rule.SucceededCount > total {
				errs = append(errs, field.Invalid(scp, *rule.SucceededCount,
					fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// countIndexes is kube's validateIndexesFormat: s is comma-separated
// indexes and "a-b" intervals, increasing, each below completions; it
// returns how many indexes s names.
func countIndexes(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, interval := range strings.Split(s, ",") {
		limits := strings.Split(interval, "-")
		if len(limits) > 2 {
			return 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", interval)
		}
		x, err := strconv.Atoi(limits[0])
		if err != nil {
			return 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
		}
		if x >= int(completions) {
			return 0, fmt.Errorf("too large index: %q", limits[0])
		}
		y := x
		if len(limits) == 2 {
			if y, err = strconv.Atoi(limits[1]); err != nil {
				return 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
			}
			if y >= int(completions) {
				return 0, fmt.Errorf("too large index: %q", limits[1])
			}
			if x >= y {
				return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
			}
		}
		if last != nil && *last >= int32(x) {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += int32(y - x + 1)
		last = new(int32(y))
	}
	return total, nil
}

// successPolicyValue prints a success policy in an error as kube-apiserver
// does: its internal type has no JSON names, so the Go field names.
type successPolicyValue struct{ sp *api.SuccessPolicy }

func (v successPolicyValue) String() string {
	if v.sp == nil {
		return "null"
	}
	type rule struct {
		SucceededIndexes *string
		SucceededCount   *int32
	}
	out := struct{ Rules []rule }{Rules: []rule{}}
	if v.sp.Rules == nil {
		out.Rules = nil
	}
	for _, r := range v.sp.Rules {
		out.Rules = append(out.Rules, rule(r))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Sprintf("%#v", *v.sp)
	}
	return string(b)
}

// validatePodFailurePolicy checks the shape of a pod failure policy; the
// job controller decides how much of it it honours.
func validatePodFailurePolicy(pfp *api.PodFailurePolicy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
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
	if !semanticEqual(j.Spec.Template, old.Spec.Template) {
		errs = append(errs, field.Invalid(p.Child("template"), goValue{j.Spec.Template}, fieldImmutableErrorMsg))
	}
	// As a *string: kube prints the mode quoted.
	errs = append(errs, validateImmutable((*string)(j.Spec.CompletionMode), (*string)(old.Spec.CompletionMode), p.Child("completionMode"))...)
	errs = append(errs, validateImmutable(j.Spec.BackoffLimitPerIndex, old.Spec.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	errs = append(errs, validateImmutable(j.Spec.ManagedBy, old.Spec.ManagedBy, p.Child("managedBy"))...)
	if !semanticEqual(j.Spec.SuccessPolicy, old.Spec.SuccessPolicy) {
		errs = append(errs, field.Invalid(p.Child("successPolicy"), successPolicyValue{j.Spec.SuccessPolicy}, fieldImmutableErrorMsg))
	}
	return append(errs, validateNameAllowsCompletions(j)...)
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
