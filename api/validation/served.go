package validation

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/cron"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/labels"
)

// The kinds served for the real kube-scheduler and kube-controller-manager
// are checked for their main fields, with Kubernetes' messages (see
// pkg/apis/*/validation): what a manifest gets wrong most.

// validateServed checks the spec of a served kind being created, or
// updated when old is not nil; ok is false for the other kinds.
func validateServed(obj, old api.Object) (errs field.ErrorList, ok bool) {
	spec := field.NewPath("spec")
	switch o := obj.(type) {
	case *api.StatefulSet:
		// The claim templates are immutable: kube checks them on create
		// only, tolerating invalid ones stored before.
		errs = validateStatefulSetSpec(&o.Spec, old == nil, spec)
		if old != nil {
			o2 := old.(*api.StatefulSet)
			errs = append(errs, validateImmutable(o.Spec.Selector, o2.Spec.Selector, spec.Child("selector"))...)
			errs = append(errs, validateImmutable(o.Spec.ServiceName, o2.Spec.ServiceName, spec.Child("serviceName"))...)
			errs = append(errs, validateImmutable(string(o.Spec.PodManagementPolicy), string(o2.Spec.PodManagementPolicy), spec.Child("podManagementPolicy"))...)
			// Compared, and printed, as kube's internal claims: without
			// the apiVersion and kind the v1 templates carry.
			if !semanticEqual(claimsWithoutTypeMeta(o.Spec.VolumeClaimTemplates), claimsWithoutTypeMeta(o2.Spec.VolumeClaimTemplates)) {
				errs = append(errs, field.Invalid(spec.Child("volumeClaimTemplates"), internalClaims(o.Spec.VolumeClaimTemplates), fieldImmutableErrorMsg))
			}
		}
	case *api.DaemonSet:
		errs = validateDaemonSetSpec(&o.Spec, spec)
		if old != nil {
			errs = append(errs, validateImmutable(o.Spec.Selector, old.(*api.DaemonSet).Spec.Selector, spec.Child("selector"))...)
		}
	case *api.ReplicationController:
		errs = validateReplicationControllerSpec(&o.Spec, spec)
	case *api.CronJob:
		var oldSpec *api.CronJobSpec
		if old != nil {
			oldSpec = &old.(*api.CronJob).Spec
		}
		errs = validateCronJobSpec(&o.Spec, oldSpec, spec)
		// Its Jobs are named NAME-<11 characters>, and a Job's name is a
		// DNS label; kube checks this on create only, so that older, longer
		// CronJobs can still be updated and deleted.
		if old == nil && len(o.Name) > 63-11 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), o.Name, "must be no more than 52 characters"))
		}
	case *api.PodDisruptionBudget:
		errs = validatePodDisruptionBudgetSpec(&o.Spec, spec)
	case *api.HorizontalPodAutoscaler:
		var oldSpec *api.HorizontalPodAutoscalerSpec
		if old != nil {
			oldSpec = &old.(*api.HorizontalPodAutoscaler).Spec
		}
		errs = validateHorizontalPodAutoscalerSpec(&o.Spec, oldSpec, spec)
	case *api.PersistentVolumeClaim, *api.PersistentVolume, *api.StorageClass, *api.CSIDriver, *api.CSINode, *api.VolumeAttachment, *api.VolumeAttributesClass:
		errs = validateStorage(obj, old)
	case *api.PodTemplate:
		errs = ValidatePodTemplateSpec(&o.Template, field.NewPath("template"))
	case *api.ControllerRevision:
		errs = validateNonnegative(o.Revision, field.NewPath("revision"))
		if old != nil {
			errs = append(errs, validateImmutable(o.Data, old.(*api.ControllerRevision).Data, field.NewPath("data"))...)
		}
	default:
		if errs, ok := validateBuiltinKinds(obj, old); ok {
			return errs, true
		}
		return validateAdmissionRegistration(obj)
	}
	return errs, true
}

// kube's pod template checks of the replicated kinds, which admit only
// restartPolicy Always.
func validateStatefulSetSpec(s *api.StatefulSetSpec, claimTemplates bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case api.OrderedReadyPodManagement, api.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), string(s.PodManagementPolicy),
			fmt.Sprintf("must be '%s' or '%s'", api.OrderedReadyPodManagement, api.ParallelPodManagement)))
	}
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(p.Child("updateStrategy"), ""))
	case "OnDelete":
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(p.Child("updateStrategy", "rollingUpdate"), goValue{s.UpdateStrategy.RollingUpdate},
				"only allowed for updateStrategy 'RollingUpdate'"))
		}
	case "RollingUpdate":
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			errs = append(errs, validateNonnegative(int64(*ru.Partition), p.Child("updateStrategy", "rollingUpdate", "partition"))...)
		}
	default:
		errs = append(errs, field.Invalid(p.Child("updateStrategy"), goValue{s.UpdateStrategy},
			"must be 'RollingUpdate' or 'OnDelete'"))
	}
	if r := s.PersistentVolumeClaimRetentionPolicy; r != nil {
		rp := p.Child("persistentVolumeClaimRetentionPolicy")
		for _, f := range []struct{ name, value string }{{"whenDeleted", r.WhenDeleted}, {"whenScaled", r.WhenScaled}} {
			if f.value != "Retain" && f.value != "Delete" {
				errs = append(errs, field.NotSupported(rp.Child(f.name), f.value, []string{"Retain", "Delete"}))
			}
		}
	}
	if claimTemplates {
		for i := range s.VolumeClaimTemplates {
			errs = append(errs, validatePersistentVolumeClaimSpec(&s.VolumeClaimTemplates[i].Spec, p.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	if s.Replicas != nil {
		errs = append(errs, validateNonnegative(int64(*s.Replicas), p.Child("replicas"))...)
	}
	errs = append(errs, validateNonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.Ordinals != nil {
		errs = append(errs, validateNonnegative(int64(s.Ordinals.Start), p.Child("ordinals.start"))...)
	}
	return append(errs, validateWorkloadSelector(s.Selector, statefulSetTemplateToValidate(s), p, "statefulset")...)
}

// statefulSetTemplateToValidate is the template as its pods will be, as
// kube validates it: the volumes of the claim templates added (they replace
// the template's volumes of the same name), so that volumeMounts may name
// them.
func statefulSetTemplateToValidate(s *api.StatefulSetSpec) *api.PodTemplateSpec {
	if len(s.VolumeClaimTemplates) == 0 {
		return &s.Template
	}
	t := api.DeepCopy(&s.Template)
	claims := map[string]bool{}
	var vols []api.Volume
	for _, c := range s.VolumeClaimTemplates {
		claims[c.Name] = true
		vols = append(vols, api.Volume{Name: c.Name, VolumeSource: api.VolumeSource{
			PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
	}
	for _, v := range t.Spec.Volumes {
		if !claims[v.Name] {
			vols = append(vols, v)
		}
	}
	t.Spec.Volumes = vols
	return t
}

func validateDaemonSetSpec(s *api.DaemonSetSpec, p *field.Path) field.ErrorList {
	errs := validateWorkloadSelector(s.Selector, &s.Template, p, "daemonset")
	errs = append(errs, validateNonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*s.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	switch s.UpdateStrategy.Type {
	case "OnDelete", "RollingUpdate":
	default:
		errs = append(errs, field.NotSupported(p.Child("updateStrategy", "type"), s.UpdateStrategy.Type, []string{"OnDelete", "RollingUpdate"}))
	}
	return errs
}

func validateReplicationControllerSpec(s *api.ReplicationControllerSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas != nil {
		errs = append(errs, validateNonnegative(int64(*s.Replicas), p.Child("replicas"))...)
	}
	errs = append(errs, validateNonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if len(s.Selector) == 0 {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	}
	if s.Template == nil {
		return append(errs, field.Required(p.Child("template"), ""))
	}
	tp := p.Child("template")
	if len(s.Selector) > 0 && !labels.SelectorFromSet(labels.Set(s.Selector)).Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), jsonValue{s.Template.Labels}, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(s.Template, tp)...)
	if s.Template.Spec.RestartPolicy != api.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(s.Template.Spec.RestartPolicy), []string{"Always"}))
	}
	return errs
}

// validateCronJobSpec checks a CronJob's spec, old being the stored one on
// an update: a schedule that already carried TZ= may keep it (kube's
// compatibility with CronJobs made before the timeZone field), and an
// unchanged timeZone is not looked up again.
func validateCronJobSpec(s, old *api.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), ""))
	} else {
		errs = append(errs, validateSchedule(s.Schedule, old != nil && strings.Contains(old.Schedule, "TZ"), s.TimeZone, p.Child("schedule"))...)
	}
	if old == nil || !equalStringPtr(old.TimeZone, s.TimeZone) {
		errs = append(errs, validateTimeZone(s.TimeZone, p.Child("timeZone"))...)
	}
	switch s.ConcurrencyPolicy {
	case api.AllowConcurrent, api.ForbidConcurrent, api.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(p.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), string(s.ConcurrencyPolicy),
			[]string{string(api.AllowConcurrent), string(api.ForbidConcurrent), string(api.ReplaceConcurrent)}))
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, validateNonnegative(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	for _, l := range []struct {
		v    *int32
		name string
	}{{s.SuccessfulJobsHistoryLimit, "successfulJobsHistoryLimit"}, {s.FailedJobsHistoryLimit, "failedJobsHistoryLimit"}} {
		if l.v != nil {
			errs = append(errs, validateNonnegative(int64(*l.v), p.Child(l.name))...)
		}
	}
	tp := p.Child("jobTemplate", "spec", "template")
	t := &s.JobTemplate.Spec.Template
	errs = append(errs, ValidatePodTemplateSpec(t, tp)...)
	if rp := t.Spec.RestartPolicy; rp != api.RestartPolicyOnFailure && rp != api.RestartPolicyNever {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(rp), []string{"OnFailure", "Never"}))
	}
	return errs
}

func validatePodDisruptionBudgetSpec(s *api.PodDisruptionBudgetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinAvailable != nil && s.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p, goValue{*s}, "minAvailable and maxUnavailable cannot be both set"))
	}
	if s.Selector != nil {
		errs = append(errs, ValidateLabelSelector(s.Selector, LabelSelectorOptions{}, p.Child("selector"))...)
	}
	if pol := s.UnhealthyPodEvictionPolicy; pol != nil && *pol != "IfHealthyBudget" && *pol != "AlwaysAllow" {
		errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *pol, []string{"AlwaysAllow", "IfHealthyBudget"}))
	}
	return errs
}

// validateSchedule parses a schedule as the controller will; a TZ= or
// CRON_TZ= prefix is refused in favour of spec.timeZone unless the stored
// schedule had one already (tzAllowed).
func validateSchedule(schedule string, tzAllowed bool, timeZone *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := cron.Parse(schedule); err != nil {
		errs = append(errs, field.Invalid(p, schedule, err.Error()))
	}
	hasTZ := strings.Contains(schedule, "TZ")
	switch {
	case tzAllowed && hasTZ && timeZone != nil:
		errs = append(errs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !tzAllowed && hasTZ:
		errs = append(errs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// timeZonePart is one component of an IANA zone name as the tz database's
// naming rules allow it (digits and '+' tolerated for legacy names).
var timeZonePart = regexp.MustCompile(`^[A-Za-z.\-_0-9+]{1,14}$`)

// validateTimeZone checks spec.timeZone: unset, or an explicit IANA zone
// the zone database knows. Names are checked before the lookup so that no
// path outside the database is ever opened.
func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, *tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePart.MatchString(part) {
			return field.ErrorList{field.Invalid(p, *tz, "unknown time zone "+*tz)}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(p, *tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(p, *tz, err.Error()))
	}
	return errs
}

func equalStringPtr(a, b *string) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}
