package validation

import (
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// The checks of the container fields kube v1.37 added with in-place resize
// (resizePolicy), container restart rules (restartPolicy and
// restartPolicyRules on any container, beta and on by default, with the
// RestartAllContainers action) and recursive read-only mounts, worded as
// kube's validation words them.

var (
	supportedResizeResources        = []string{"cpu", "memory"}
	supportedResizePolicies         = []string{"NotRequired", "RestartContainer"}
	supportedContainerRestartPolicy = []string{"Always", "Never", "OnFailure"}
	supportedRestartRuleActions     = []string{"Restart", "RestartAllContainers"}
	supportedRestartRuleOperators   = []string{"In", "NotIn"}
	supportedRecursiveReadOnly      = []string{"Disabled", "Enabled", "IfPossible"}
)

// validateResizePolicy checks a container's resizePolicy: each of cpu and
// memory at most once, with NotRequired or RestartContainer, and only
// NotRequired in a pod that never restarts. kube reports a bad name or
// policy on the list, not on the item.
func validateResizePolicy(policies []api.ContainerResizePolicy, p *field.Path, podRestart api.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	seen := map[api.ResourceName]bool{}
	for i, rp := range policies {
		if seen[rp.ResourceName] {
			errs = append(errs, field.Duplicate(p.Index(i), string(rp.ResourceName)))
		}
		seen[rp.ResourceName] = true
		switch {
		case rp.ResourceName == "":
			errs = append(errs, field.Required(p, ""))
		case !slices.Contains(supportedResizeResources, string(rp.ResourceName)):
			errs = append(errs, field.NotSupported(p, string(rp.ResourceName), supportedResizeResources))
		}
		switch {
		case rp.RestartPolicy == "":
			errs = append(errs, field.Required(p, ""))
		case !slices.Contains(supportedResizePolicies, string(rp.RestartPolicy)):
			errs = append(errs, field.NotSupported(p, string(rp.RestartPolicy), supportedResizePolicies))
		}
		if podRestart == api.RestartPolicyNever && rp.RestartPolicy != api.NotRequired {
			errs = append(errs, field.Invalid(p, string(rp.RestartPolicy), "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return errs
}

// validateContainerRestartRules checks a container's restartPolicy and
// restartPolicyRules (p is the container's path): rules need a policy, at
// most 20 of them, each with a supported action and exitCodes with In or
// NotIn and at most 255 values.
func validateContainerRestartRules(policy *api.ContainerRestartPolicy, rules []api.ContainerRestartRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policy == nil {
		if len(rules) == 0 {
			return nil
		}
		errs = append(errs, field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	} else if !slices.Contains(supportedContainerRestartPolicy, string(*policy)) {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), string(*policy), supportedContainerRestartPolicy))
	}
	if len(rules) > 20 {
		errs = append(errs, field.TooMany(p.Child("restartPolicyRules"), len(rules), 20))
	}
	for i, r := range rules {
		rp := p.Child("restartPolicyRules").Index(i)
		if !slices.Contains(supportedRestartRuleActions, string(r.Action)) {
			errs = append(errs, field.NotSupported(rp.Child("action"), string(r.Action), supportedRestartRuleActions))
		}
		if r.ExitCodes == nil {
			errs = append(errs, field.Required(rp.Child("exitCodes"), "must be specified"))
			continue
		}
		if !slices.Contains(supportedRestartRuleOperators, string(r.ExitCodes.Operator)) {
			errs = append(errs, field.NotSupported(rp.Child("exitCodes", "operator"), string(r.ExitCodes.Operator), supportedRestartRuleOperators))
		}
		if len(r.ExitCodes.Values) > 255 {
			errs = append(errs, field.TooMany(rp.Child("exitCodes", "values"), len(r.ExitCodes.Values), 255))
		}
	}
	return errs
}

// validateInitContainerRestartRules is validateContainerRestartRules for an
// init container, whose restartPolicy may be absent.
func validateInitContainerRestartRules(policy *api.ContainerRestartPolicy, rules []api.ContainerRestartRule, p *field.Path) field.ErrorList {
	if policy == nil {
		if len(rules) > 0 {
			return field.ErrorList{field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used")}
		}
		return nil
	}
	return validateContainerRestartRules(policy, rules, p)
}

// validateMountRecursiveReadOnly checks a mount's recursiveReadOnly; p is
// kube's path for it, volumeMounts.recursiveReadOnly without the index.
func validateMountRecursiveReadOnly(m api.VolumeMount, p *field.Path) field.ErrorList {
	if m.RecursiveReadOnly == nil {
		return nil
	}
	var errs field.ErrorList
	switch *m.RecursiveReadOnly {
	case api.RecursiveReadOnlyDisabled:
	case api.RecursiveReadOnlyEnabled, api.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			errs = append(errs, field.Forbidden(p, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != "None" {
			errs = append(errs, field.Forbidden(p, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		errs = append(errs, field.NotSupported(p, string(*m.RecursiveReadOnly), supportedRecursiveReadOnly))
	}
	return errs
}

// validateFileKeySelector checks an env var's fileKeyRef (EnvFiles, beta
// and on): a key that is an environment variable name, a volume name that
// is a DNS label, a path without "..".
func validateFileKeySelector(s *api.FileKeySelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	} else {
		for _, msg := range naming.IsEnvVarName(s.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), s.Key, msg))
		}
	}
	if s.VolumeName == "" {
		errs = append(errs, field.Required(p.Child("volumeName"), ""))
	} else {
		errs = append(errs, validateDNS1123Label(s.VolumeName, p.Child("volumeName"))...)
	}
	if s.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	} else {
		errs = append(errs, validatePathNoBacksteps(s.Path, p.Child("path"))...)
	}
	return errs
}
