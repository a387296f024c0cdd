package validation

import (
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/naming"
)

// ValidateDeployment checks a deployment being created.
func ValidateDeployment(d *api.Deployment) field.ErrorList {
	errs := ValidateObjectMeta(&d.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
}

func validateDeploymentSpec(spec *api.DeploymentSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Replicas != nil {
		errs = append(errs, validateNonnegative(int64(*spec.Replicas), p.Child("replicas"))...)
	}
	errs = append(errs, validateWorkloadSelector(spec.Selector, &spec.Template, p, "deployment")...)
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, p.Child("strategy"))...)
	errs = append(errs, validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, validateNonnegative(int64(*spec.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if pds := spec.ProgressDeadlineSeconds; pds != nil {
		errs = append(errs, validateNonnegative(int64(*pds), p.Child("progressDeadlineSeconds"))...)
		if *pds <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), *pds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

// activeDeadlineKinds names the kind in the activeDeadlineSeconds message
// (Deployments share the ReplicaSet's check).
var activeDeadlineKinds = map[string]string{"deployment": "ReplicaSet", "statefulset": "StatefulSet", "daemonset": "DaemonSet"}

// validateWorkloadSelector checks the selector of a replicated workload and
// its pod template: a non-empty selector matching the template's labels,
// and a template whose pods restart Always. kind words the messages as
// kube does: "deployment" (which kube's ReplicaSet says as well),
// "statefulset", "daemonset"; a DaemonSet's selector is not reported as
// required, only as matching nothing.
func validateWorkloadSelector(sel *api.LabelSelector, t *api.PodTemplateSpec, p *field.Path, kind string) field.ErrorList {
	var errs field.ErrorList
	switch {
	case sel == nil && kind != "daemonset":
		errs = append(errs, field.Required(p.Child("selector"), ""))
	case sel != nil:
		errs = append(errs, ValidateLabelSelector(sel, LabelSelectorOptions{}, p.Child("selector"))...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(p.Child("selector"), jsonValue{sel}, "empty selector is invalid for "+kind))
		}
	}
	tp := p.Child("template")
	if s, err := labels.SelectorFromLabelSelector(sel); err != nil {
		errs = append(errs, field.Invalid(p.Child("selector"), jsonValue{sel}, "invalid label selector"))
	} else if !s.Empty() && !s.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), jsonValue{t.Labels}, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(t, tp)...)
	if t.Spec.RestartPolicy != api.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), string(t.Spec.RestartPolicy), []string{"Always"}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+activeDeadlineKinds[kind]+" is not Supported"))
	}
	return errs
}

func validateDeploymentStrategy(s *api.DeploymentStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case api.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case api.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateRollingUpdate(s.RollingUpdate, p.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(p, goValue{*s}, []string{"Recreate", "RollingUpdate"})}
	}
	return nil
}

func validateRollingUpdate(ru *api.RollingUpdateDeployment, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	up, sp := p.Child("maxUnavailable"), p.Child("maxSurge")
	unavailable, surge := intOrString(ru.MaxUnavailable), intOrString(ru.MaxSurge)
	errs = append(errs, validatePositiveIntOrPercent(unavailable, up)...)
	errs = append(errs, validatePositiveIntOrPercent(surge, sp)...)
	if intOrPercentValue(unavailable) == 0 && intOrPercentValue(surge) == 0 {
		errs = append(errs, field.Invalid(up, unavailable, "may not be 0 when `maxSurge` is 0"))
	}
	if v, isPercent := percentValue(unavailable); isPercent && v > 100 {
		errs = append(errs, field.Invalid(up, unavailable, "must not be greater than 100%"))
	}
	return errs
}

func intOrString(v *api.IntOrString) api.IntOrString {
	if v == nil {
		return api.IntOrString{}
	}
	return *v
}

func validatePositiveIntOrPercent(v api.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v.Type == api.String {
		for _, msg := range naming.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v, msg))
		}
		return errs
	}
	return validateNonnegative(int64(v.IntVal), p)
}

func percentValue(v api.IntOrString) (int, bool) {
	if v.Type != api.String || len(naming.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v api.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return int(v.IntVal)
}

// ValidateDeploymentUpdate checks a deployment update; in apps/v1 the
// selector is immutable.
func ValidateDeploymentUpdate(d, old *api.Deployment) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
	return append(errs, validateImmutable(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

// ValidateDeploymentStatusUpdate checks a write to deployments/status.
func ValidateDeploymentStatusUpdate(d, old *api.Deployment) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := d.Status, field.NewPath("status")
	errs = append(errs, validateNonnegative(st.ObservedGeneration, p.Child("observedGeneration"))...)
	for _, f := range []struct {
		v    int32
		name string
	}{{st.Replicas, "replicas"}, {st.UpdatedReplicas, "updatedReplicas"}, {st.ReadyReplicas, "readyReplicas"},
		{st.AvailableReplicas, "availableReplicas"}, {st.UnavailableReplicas, "unavailableReplicas"}} {
		errs = append(errs, validateNonnegative(int64(f.v), p.Child(f.name))...)
	}
	if st.TerminatingReplicas != nil {
		errs = append(errs, validateNonnegative(int64(*st.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	if st.CollisionCount != nil {
		errs = append(errs, validateNonnegative(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	const msg = "cannot be greater than status.replicas"
	if st.UpdatedReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("updatedReplicas"), st.UpdatedReplicas, msg))
	}
	if st.ReadyReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), st.ReadyReplicas, msg))
	}
	if st.AvailableReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, msg))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	if isDecremented(st.CollisionCount, old.Status.CollisionCount) {
		errs = append(errs, field.Invalid(p.Child("collisionCount"), derefInt32(st.CollisionCount), "cannot be decremented"))
	}
	return errs
}

func isDecremented(v, old *int32) bool {
	if old == nil {
		return false
	}
	return v == nil || *v < *old
}

func derefInt32(v *int32) int32 {
	if v == nil {
		return 0
	}
	return *v
}

// ValidateReplicaSet checks a replica set being created.
func ValidateReplicaSet(rs *api.ReplicaSet) field.ErrorList {
	errs := ValidateObjectMeta(&rs.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

func validateReplicaSetSpec(spec *api.ReplicaSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Replicas != nil {
		errs = append(errs, validateNonnegative(int64(*spec.Replicas), p.Child("replicas"))...)
	}
	errs = append(errs, validateNonnegative(int64(spec.MinReadySeconds), p.Child("minReadySeconds"))...)
	return append(errs, validateWorkloadSelector(spec.Selector, &spec.Template, p, "deployment")...)
}

// ValidateReplicaSetUpdate checks a replica set update; in apps/v1 the
// selector is immutable.
func ValidateReplicaSetUpdate(rs, old *api.ReplicaSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	return append(errs, validateImmutable(rs.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

// ValidateReplicaSetStatusUpdate checks a write to replicasets/status.
func ValidateReplicaSetStatusUpdate(rs, old *api.ReplicaSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := rs.Status, field.NewPath("status")
	for _, f := range []struct {
		v    int32
		name string
	}{{st.Replicas, "replicas"}, {st.FullyLabeledReplicas, "fullyLabeledReplicas"}, {st.ReadyReplicas, "readyReplicas"},
		{st.AvailableReplicas, "availableReplicas"}} {
		errs = append(errs, validateNonnegative(int64(f.v), p.Child(f.name))...)
	}
	errs = append(errs, validateNonnegative(st.ObservedGeneration, p.Child("observedGeneration"))...)
	const msg = "cannot be greater than status.replicas"
	if st.FullyLabeledReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("fullyLabeledReplicas"), st.FullyLabeledReplicas, msg))
	}
	if st.ReadyReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), st.ReadyReplicas, msg))
	}
	if st.AvailableReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, msg))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}

// ValidateScale checks the body of a scale subresource write.
func ValidateScale(s *api.Scale) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateNonnegative(int64(s.Spec.Replicas), field.NewPath("spec", "replicas"))...)
}
