package validation

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// podOptions says where a pod spec sits: in a Pod (stricter: host ports
// must equal container ports under hostNetwork) or in a template.
type podOptions struct {
	resourceIsPod bool
}

// ValidatePod checks a pod being created.
func ValidatePod(pod *api.Pod) field.ErrorList {
	errs := validatePodMetadataAndSpec(pod)
	specPath := field.NewPath("spec")
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	errs = append(errs, validateAppArmorAnnotationsMatchFields(pod.Annotations, &pod.Spec, specPath)...)
	return errs
}

func validatePodMetadataAndSpec(pod *api.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := ValidateObjectMeta(&pod.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validatePodSpec(&pod.Spec, specPath, podOptions{resourceIsPod: true})...)
	errs = append(errs, validateAppArmorAnnotations(pod.Annotations, &pod.Spec, field.NewPath("metadata", "annotations"))...)
	// Pods only (not templates), kept from Kubernetes for compatibility.
	for _, list := range []struct {
		cs   []api.Container
		path *field.Path
	}{{pod.Spec.Containers, specPath.Child("containers")}, {pod.Spec.InitContainers, specPath.Child("initContainers")}} {
		for i, c := range list.cs {
			if len(c.Image) != len(strings.TrimSpace(c.Image)) {
				errs = append(errs, field.Invalid(list.path.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
			}
		}
	}
	return errs
}

// ValidatePodTemplateSpec checks the pod template of a workload.
func ValidatePodTemplateSpec(t *api.PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := ValidateLabels(t.Labels, path.Child("labels"))
	errs = append(errs, ValidateAnnotations(t.Annotations, path.Child("annotations"))...)
	errs = append(errs, ValidatePodSpec(&t.Spec, path.Child("spec"))...)
	errs = append(errs, validateAppArmorAnnotations(t.Annotations, &t.Spec, path.Child("annotations"))...)
	errs = append(errs, validateAppArmorAnnotationsMatchFields(t.Annotations, &t.Spec, path.Child("spec"))...)
	return errs
}

const (
	appArmorAnnotationPrefix     = api.DeprecatedAppArmorAnnotationKeyPrefix
	appArmorAnnotationLocalhost  = api.DeprecatedAppArmorAnnotationValueLocalhostPrefix
	appArmorAnnotationDefault    = api.DeprecatedAppArmorAnnotationValueRuntimeDefault
	appArmorAnnotationUnconfined = api.DeprecatedAppArmorAnnotationValueUnconfined
)

// validateAppArmorAnnotations is Kubernetes' ValidateAppArmorPodAnnotations:
// each annotation names a container of the pod and a known profile form.
func validateAppArmorAnnotations(annotations map[string]string, spec *api.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		name, ok := strings.CutPrefix(k, appArmorAnnotationPrefix)
		if !ok {
			continue
		}
		found := false
		visitContainers(spec, field.NewPath("spec"), func(c *api.Container, _ *field.Path) { found = found || c.Name == name })
		if !found {
			errs = append(errs, field.Invalid(p.Key(k), name, "container not found"))
		}
		if v := annotations[k]; v != "" && v != appArmorAnnotationDefault && v != appArmorAnnotationUnconfined && !strings.HasPrefix(v, appArmorAnnotationLocalhost) {
			errs = append(errs, field.Invalid(p.Key(k), v, fmt.Sprintf("invalid AppArmor profile name: %q", v)))
		}
	}
	return errs
}

// validateAppArmorAnnotationsMatchFields: on create, a container's
// AppArmor annotation must say what its (or the pod's) appArmorProfile
// says, as Kubernetes checks; Windows pods are not checked.
func validateAppArmorAnnotationsMatchFields(annotations map[string]string, spec *api.PodSpec, p *field.Path) field.ErrorList {
	if spec.OS != nil && spec.OS.Name == "windows" {
		return nil
	}
	var podProfile *api.AppArmorProfile
	if spec.SecurityContext != nil {
		podProfile = spec.SecurityContext.AppArmorProfile
	}
	var errs field.ErrorList
	visitContainers(spec, p, func(c *api.Container, cp *field.Path) {
		profile := podProfile
		if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			profile = c.SecurityContext.AppArmorProfile
		}
		annotation, found := annotations[appArmorAnnotationPrefix+c.Name]
		if profile == nil || !found {
			return
		}
		ap := cp.Child("securityContext", "appArmorProfile")
		mismatch := field.Forbidden(ap.Child("type"), "apparmor type in annotation and field must match")
		switch profile.Type {
		case api.AppArmorProfileTypeUnconfined:
			if annotation != appArmorAnnotationUnconfined {
				errs = append(errs, mismatch)
			}
		case api.AppArmorProfileTypeRuntimeDefault:
			if annotation != appArmorAnnotationDefault {
				errs = append(errs, mismatch)
			}
		case api.AppArmorProfileTypeLocalhost:
			if !strings.HasPrefix(annotation, appArmorAnnotationLocalhost) {
				errs = append(errs, mismatch)
			} else if profile.LocalhostProfile == nil || strings.TrimPrefix(annotation, appArmorAnnotationLocalhost) != *profile.LocalhostProfile {
				errs = append(errs, field.Forbidden(ap.Child("localhostProfile"), "apparmor profile in annotation and field must match"))
			}
		}
	})
	return errs
}

// validatePodSpecificAnnotationUpdates: a pod's AppArmor annotations and
// its mirror pod annotation are immutable (a normal pod may not become a
// mirror pod, nor a mirror pod stop being one), on every write of a pod:
// the object, its status and its ephemeral containers.
func validatePodSpecificAnnotationUpdates(annotations, old map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if v, ok := annotations[k]; ok && v == old[k] {
			continue
		}
		if strings.HasPrefix(k, appArmorAnnotationPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == api.MirrorPodAnnotationKey {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if _, ok := old[k]; ok {
			continue
		}
		if strings.HasPrefix(k, appArmorAnnotationPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add AppArmor annotations"))
		}
		if k == api.MirrorPodAnnotationKey {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add mirror pod annotation"))
		}
	}
	return errs
}

// updatablePodSpecFields is quoted in the error for a forbidden pod update.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// ValidatePodUpdate checks an update of a pod by a user: the spec is
// immutable except container images, activeDeadlineSeconds (only
// shortened), added tolerations (or changed tolerationSeconds), removed
// scheduling gates and, for gated pods, additions to nodeSelector.
func ValidatePodUpdate(pod, old *api.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validatePodMetadataAndSpec(pod)...)
	errs = append(errs, validatePodSpecificAnnotationUpdates(pod.Annotations, old.Annotations, field.NewPath("metadata", "annotations"))...)

	for _, pair := range []struct {
		cs, oldCs []api.Container
		path      *field.Path
	}{
		{pod.Spec.Containers, old.Spec.Containers, specPath.Child("containers")},
		{pod.Spec.InitContainers, old.Spec.InitContainers, specPath.Child("initContainers")},
	} {
		if len(pair.cs) != len(pair.oldCs) {
			return append(errs, field.Forbidden(pair.path, "pod updates may not add or remove containers"))
		}
		for i, c := range pair.cs {
			if c.Image == "" {
				errs = append(errs, field.Required(pair.path.Index(i).Child("image"), ""))
			}
		}
	}

	if ads := pod.Spec.ActiveDeadlineSeconds; ads != nil {
		if *ads < 0 || *ads > math.MaxInt32 {
			return append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *ads, naming.InclusiveRangeError(0, math.MaxInt32)))
		}
		if old.Spec.ActiveDeadlineSeconds != nil && *old.Spec.ActiveDeadlineSeconds < *ads {
			return append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *ads, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), rawText("null"), "must not update from a positive integer to nil value"))
	}

	errs = append(errs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if semanticEqual(pod.Spec, old.Spec) {
		return errs
	}
	// Undo the allowed changes, then anything left is forbidden.
	munged := api.DeepCopy(&pod.Spec)
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if g := old.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if len(old.Spec.SchedulingGates) > 0 && !semanticEqual(munged.NodeSelector, old.Spec.NodeSelector) {
		// A gated pod may gain nodeSelector entries, not lose or change them.
		for k, v := range old.Spec.NodeSelector {
			if nv, ok := munged.NodeSelector[k]; !ok || nv != v {
				errs = append(errs, field.Invalid(specPath.Child("nodeSelector"), goValue{munged.NodeSelector}, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.Spec.NodeSelector
	}
	if !semanticEqual(*munged, old.Spec) {
		errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%s",
			strings.Join(updatablePodSpecFields, ","), specDiff(specPath, old.Spec, *munged))))
	}
	return errs
}

func validateOnlyAddedTolerations(tols, oldTols []api.Toleration, path *field.Path) field.ErrorList {
	for _, o := range oldTols {
		found := false
		for _, n := range tols {
			o.TolerationSeconds = n.TolerationSeconds
			if semanticEqual(o, n) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(path, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return ValidateTolerations(tols, path)
}

func validateOnlyDeletedSchedulingGates(gates, oldGates []api.PodSchedulingGate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, g := range gates {
		if !slices.Contains(oldGates, g) {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"),
				fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

// ValidatePodStatusUpdate checks a write to pods/status: metadata rules,
// custom condition types, nodeName untouched, qosClass immutable,
// containers of non-restarting pods not leaving the terminated state, and
// well-formed pod and host IPs.
func ValidatePodStatusUpdate(pod, old *api.Pod) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validatePodSpecificAnnotationUpdates(pod.Annotations, old.Annotations, field.NewPath("metadata", "annotations"))...)
	statusPath := field.NewPath("status")
	for i, c := range pod.Status.Conditions {
		switch c.Type {
		case api.PodScheduled, api.PodReady, api.PodInitialized:
			continue
		}
		for _, msg := range naming.IsQualifiedName(string(c.Type)) {
			errs = append(errs, field.Invalid(statusPath.Child("conditions").Index(i).Child("type"), string(c.Type), msg))
		}
	}
	if pod.Spec.NodeName != old.Spec.NodeName {
		errs = append(errs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	if n := pod.Status.NominatedNodeName; n != old.Status.NominatedNodeName && n != "" {
		for _, msg := range naming.NameIsDNSSubdomain(n, false) {
			errs = append(errs, field.Invalid(statusPath.Child("nominatedNodeName"), n, msg))
		}
	}
	if old.Status.QOSClass != "" {
		errs = append(errs, validateImmutable(string(pod.Status.QOSClass), string(old.Status.QOSClass), statusPath.Child("qosClass"))...)
	}
	errs = append(errs, validateContainerStateTransition(pod.Status.ContainerStatuses, old.Status.ContainerStatuses,
		statusPath.Child("containerStatuses"), old.Spec.RestartPolicy, nil)...)
	errs = append(errs, validateContainerStateTransition(pod.Status.InitContainerStatuses, old.Status.InitContainerStatuses,
		statusPath.Child("initContainerStatuses"), old.Spec.RestartPolicy, old.Spec.InitContainers)...)
	errs = append(errs, validateIPList(podIPStrings(pod.Status.PodIPs), statusPath.Child("podIPs"))...)
	if len(pod.Status.HostIPs) > 0 {
		if pod.Status.HostIP != pod.Status.HostIPs[0].IP {
			errs = append(errs, field.Invalid(statusPath.Child("hostIPs").Index(0).Child("ip"), pod.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
		}
		ips := make([]string, len(pod.Status.HostIPs))
		for i, h := range pod.Status.HostIPs {
			ips[i] = h.IP
		}
		errs = append(errs, validateIPList(ips, statusPath.Child("hostIPs"))...)
	}
	return errs
}

func podIPStrings(ips []api.PodIP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.IP
	}
	return out
}

// validateIPList checks a pod's or host's IP list: valid IPs, at most one
// per family, no duplicates.
func validateIPList(ips []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	invalid := false
	for i, ip := range ips {
		for _, msg := range naming.IsValidIPForLegacyField(ip, false) {
			errs = append(errs, field.Invalid(path.Index(i), ip, msg))
			invalid = true
		}
	}
	if invalid || len(ips) < 2 {
		return errs
	}
	if len(ips) > 2 || isIPv6(ips[0]) == isIPv6(ips[1]) {
		errs = append(errs, field.Invalid(path, goValue{ips}, "may specify no more than one IP for each IP family"))
	}
	seen := map[string]bool{}
	for i, ip := range ips {
		if seen[ip] {
			errs = append(errs, field.Duplicate(path.Index(i), ip))
		}
		seen[ip] = true
	}
	return errs
}

func isIPv6(ip string) bool { return strings.Contains(ip, ":") }

func validateContainerStateTransition(statuses, oldStatuses []api.ContainerStatus, path *field.Path,
	policy api.RestartPolicy, initContainers []api.Container) field.ErrorList {
	var errs field.ErrorList
	if policy == api.RestartPolicyAlways {
		return nil
	}
	for i, o := range oldStatuses {
		if o.State.Terminated == nil || (o.State.Terminated.ExitCode != 0 && policy == api.RestartPolicyOnFailure) {
			continue
		}
		if restartableInit(initContainers, o.Name) {
			continue
		}
		for _, n := range statuses {
			if n.Name == o.Name && n.State.Terminated == nil {
				errs = append(errs, field.Forbidden(path.Index(i).Child("state"), "may not be transitioned to non-terminated state"))
			}
		}
	}
	return errs
}

func restartableInit(cs []api.Container, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways
		}
	}
	return false
}

// ValidateBinding checks the body of pods/NAME/binding.
func ValidateBinding(b *api.Binding) field.ErrorList {
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	return errs
}

// ValidatePodSpec checks a pod spec embedded in another object (a
// template); ValidatePod applies the stricter rules of a Pod's own spec.
func ValidatePodSpec(spec *api.PodSpec, p *field.Path) field.ErrorList {
	return validatePodSpec(spec, p, podOptions{})
}

func validatePodSpec(spec *api.PodSpec, p *field.Path, opts podOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(p.Child("terminationGracePeriodSeconds"), ""))
	}
	grace := spec.TerminationGracePeriodSeconds
	vols, verrs := validateVolumes(spec.Volumes, p.Child("volumes"))
	errs = append(errs, verrs...)
	errs = append(errs, validateContainers(spec, vols, grace, p.Child("containers"))...)
	errs = append(errs, validateInitContainers(spec, vols, grace, p.Child("initContainers"))...)
	errs = append(errs, validateHostNetworkPorts(spec, p, opts)...)
	errs = append(errs, validateRestartPolicy(spec.RestartPolicy, p.Child("restartPolicy"))...)
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, p.Child("dnsPolicy"))...)
	errs = append(errs, ValidateLabels(spec.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, validatePodSecurityContext(spec, p.Child("securityContext"))...)
	errs = append(errs, validateProcMountHostUsers(spec, p)...)
	errs = append(errs, validateAffinity(spec.Affinity, p.Child("affinity"))...)
	errs = append(errs, validateDNSConfig(spec.DNSConfig, spec.DNSPolicy, p.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		errs = append(errs, validateQualifiedName(string(g.ConditionType), p.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	seenGates := map[string]bool{}
	for i, g := range spec.SchedulingGates {
		errs = append(errs, validateQualifiedName(g.Name, p.Child("schedulingGates").Index(i))...)
		if seenGates[g.Name] {
			errs = append(errs, field.Duplicate(p.Child("schedulingGates").Index(i), g.Name))
		}
		seenGates[g.Name] = true
	}
	errs = append(errs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, p.Child("topologySpreadConstraints"))...)
	for _, f := range []struct {
		value, name string
	}{{spec.ServiceAccountName, "serviceAccountName"}, {spec.NodeName, "nodeName"}, {spec.PriorityClassName, "priorityClassName"}} {
		if f.value == "" {
			continue
		}
		for _, msg := range naming.NameIsDNSSubdomain(f.value, false) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	if ads := spec.ActiveDeadlineSeconds; ads != nil && (*ads < 1 || *ads > math.MaxInt32) {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *ads, naming.InclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Hostname != "" {
		errs = append(errs, validateDNS1123Label(spec.Hostname, p.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, validateDNS1123Label(spec.Subdomain, p.Child("subdomain"))...)
	}
	errs = append(errs, ValidateTolerations(spec.Tolerations, p.Child("tolerations"))...)
	for i, ha := range spec.HostAliases {
		hp := p.Child("hostAliases").Index(i)
		for _, msg := range naming.IsValidIP(ha.IP) {
			errs = append(errs, field.Invalid(hp.Child("ip"), ha.IP, msg))
		}
		for j, h := range ha.Hostnames {
			errs = append(errs, validateDNS1123Subdomain(h, hp.Child("hostnames").Index(j))...)
		}
	}
	if spec.RuntimeClassName != nil {
		for _, msg := range naming.NameIsDNSSubdomain(*spec.RuntimeClassName, false) {
			errs = append(errs, field.Invalid(p.Child("runtimeClassName"), *spec.RuntimeClassName, msg))
		}
	}
	if pp := spec.PreemptionPolicy; pp != nil {
		switch *pp {
		case api.PreemptLowerPriority, api.PreemptNever:
		case "":
			errs = append(errs, field.Required(p.Child("preemptionPolicy"), ""))
		default:
			errs = append(errs, field.NotSupported(p.Child("preemptionPolicy"), string(*pp),
				[]string{string(api.PreemptLowerPriority), string(api.PreemptNever)}))
		}
	}
	if spec.Overhead != nil {
		errs = append(errs, validateResourceRequirements(&api.ResourceRequirements{Limits: spec.Overhead}, p.Child("overhead"))...)
	}
	if spec.OS != nil {
		switch spec.OS.Name {
		case "linux", "windows":
		case "":
			errs = append(errs, field.Required(p.Child("os", "name"), ""))
		default:
			errs = append(errs, field.NotSupported(p.Child("os", "name"), spec.OS.Name, []string{"linux", "windows"}))
		}
		switch spec.OS.Name {
		case "linux":
			errs = append(errs, validateLinux(spec, p)...)
		case "windows":
			errs = append(errs, validateWindows(spec, p)...)
		}
	}
	errs = append(errs, validateWindowsHostProcessPod(spec, p)...)
	return errs
}

// visitContainers calls visit on each init, regular and ephemeral container
// with its path, in Kubernetes' order (podshelper.VisitContainersWithPath).
func visitContainers(spec *api.PodSpec, p *field.Path, visit func(c *api.Container, cp *field.Path)) {
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], p.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], p.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		visit(&spec.EphemeralContainers[i].Container, p.Child("ephemeralContainers").Index(i))
	}
}

// validateLinux: no Windows options in a pod for Linux.
func validateLinux(spec *api.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		errs = append(errs, field.Forbidden(p.Child("securityContext", "windowsOptions"), "windows options cannot be set for a linux pod"))
	}
	visitContainers(spec, p, func(c *api.Container, cp *field.Path) {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			errs = append(errs, field.Forbidden(cp.Child("securityContext", "windowsOptions"), "windows options cannot be set for a linux pod"))
		}
	})
	return errs
}

// validateWindows: none of the Linux-only security settings in a pod for
// Windows, as Kubernetes lists them.
func validateWindows(spec *api.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, fp *field.Path) {
		if set {
			errs = append(errs, field.Forbidden(fp, "cannot be set for a windows pod"))
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		sp := p.Child("securityContext")
		forbid(sc.AppArmorProfile != nil, sp.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, sp.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, sp.Child("seccompProfile"))
		forbid(sc.FSGroup != nil, sp.Child("fsGroup"))
		forbid(sc.FSGroupChangePolicy != nil, sp.Child("fsGroupChangePolicy"))
		forbid(len(sc.Sysctls) > 0, sp.Child("sysctls"))
		forbid(sc.RunAsUser != nil, sp.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, sp.Child("runAsGroup"))
		forbid(sc.SupplementalGroups != nil, sp.Child("supplementalGroups"))
		forbid(sc.SupplementalGroupsPolicy != nil, sp.Child("supplementalGroupsPolicy"))
		forbid(sc.SELinuxChangePolicy != nil, sp.Child("seLinuxChangePolicy"))
	}
	forbid(spec.HostUsers != nil, p.Child("hostUsers"))
	forbid(spec.HostPID, p.Child("hostPID"))
	forbid(spec.HostIPC, p.Child("hostIPC"))
	forbid(spec.ShareProcessNamespace != nil, p.Child("shareProcessNamespace"))
	visitContainers(spec, p, func(c *api.Container, cp *field.Path) {
		sc := c.SecurityContext
		if sc == nil {
			return
		}
		sp := cp.Child("securityContext")
		forbid(sc.AppArmorProfile != nil, sp.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, sp.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, sp.Child("seccompProfile"))
		forbid(sc.Capabilities != nil, sp.Child("capabilities"))
		forbid(sc.ReadOnlyRootFilesystem != nil, sp.Child("readOnlyRootFilesystem"))
		forbid(sc.Privileged != nil, sp.Child("privileged"))
		forbid(sc.AllowPrivilegeEscalation != nil, sp.Child("allowPrivilegeEscalation"))
		forbid(sc.ProcMount != nil, sp.Child("procMount"))
		forbid(sc.RunAsUser != nil, sp.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, sp.Child("runAsGroup"))
	})
	return errs
}

// validateWindowsHostProcessPod: hostProcess the same in pod and
// containers, all containers or none, and only with hostNetwork. (Kube
// also refuses hostProcess without --allow-privileged; minik8s allows
// privileged containers, as kubeadm's kube-apiserver does.)
func validateWindowsHostProcessPod(spec *api.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var podHostProcess *bool
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		podHostProcess = sc.WindowsOptions.HostProcess
	}
	containers, hostProcess := 0, 0
	visitContainers(spec, p, func(c *api.Container, cp *field.Path) {
		containers++
		var ch *bool
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			ch = c.SecurityContext.WindowsOptions.HostProcess
		}
		if podHostProcess != nil && ch != nil && *podHostProcess != *ch {
			errs = append(errs, field.Invalid(cp.Child("securityContext", "windowsOptions", "hostProcess"), *ch,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podHostProcess)))
		}
		if ch != nil && *ch || ch == nil && podHostProcess != nil && *podHostProcess {
			hostProcess++
		}
	})
	if hostProcess > 0 {
		if hostProcess != containers {
			errs = append(errs, field.Invalid(p, "", "If pod contains any hostProcess containers then all containers must be HostProcess containers"))
		}
		if !spec.HostNetwork {
			errs = append(errs, field.Invalid(p.Child("hostNetwork"), false, "hostNetwork must be true if pod contains any hostProcess containers"))
		}
	}
	return errs
}

func validateRestartPolicy(policy api.RestartPolicy, p *field.Path) field.ErrorList {
	switch policy {
	case api.RestartPolicyAlways, api.RestartPolicyOnFailure, api.RestartPolicyNever:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	}
	return field.ErrorList{field.NotSupported(p, string(policy), []string{"Always", "OnFailure", "Never"})}
}

func validateDNSPolicy(policy api.DNSPolicy, p *field.Path) field.ErrorList {
	switch policy {
	case api.DNSClusterFirstWithHostNet, api.DNSClusterFirst, api.DNSDefault, api.DNSNone:
		return nil
	case "":
		return field.ErrorList{field.Required(p, "")}
	}
	return field.ErrorList{field.NotSupported(p, string(policy), []string{"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"})}
}

// validateHostNetworkPorts: under hostNetwork a pod's host ports are its
// container ports; in templates 0 is allowed as it is defaulted later.
func validateHostNetworkPorts(spec *api.PodSpec, p *field.Path, opts podOptions) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			if hp, cp := port.HostPort, port.ContainerPort; (opts.resourceIsPod || hp != 0) && hp != cp {
				errs = append(errs, field.Invalid(p.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"),
					hp, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return errs
}

const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

func validateDNSConfig(c *api.PodDNSConfig, policy api.DNSPolicy, p *field.Path) field.ErrorList {
	if policy == api.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(p, "must provide `dnsConfig` when `dnsPolicy` is None")}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(p.Child("nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None")}
		}
	}
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if len(c.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(p.Child("nameservers"), goValue{c.Nameservers}, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range c.Nameservers {
		for _, msg := range naming.IsValidIP(ns) {
			errs = append(errs, field.Invalid(p.Child("nameservers").Index(i), ns, msg))
		}
	}
	if len(c.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(p.Child("searches"), goValue{c.Searches}, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(c.Searches, " ")) > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(p.Child("searches"), goValue{c.Searches}, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range c.Searches {
		errs = append(errs, validateDNS1123Subdomain(strings.TrimSuffix(s, "."), p.Child("searches").Index(i))...)
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(p.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

// Volumes.

type volumeSourceCheck struct {
	name  string // path segment Kubernetes reports for a second source
	set   func(*api.VolumeSource) bool
	check func(*api.VolumeSource, *field.Path) field.ErrorList
}

// volumeSourceChecks lists sources in Kubernetes' order, so the error for
// "more than 1 volume type" lands on the same field (spelling included:
// Kubernetes reports "cephFS" and "downwarAPI" there).
var volumeSourceChecks = []volumeSourceCheck{
	{"emptyDir", func(v *api.VolumeSource) bool { return v.EmptyDir != nil }, validateEmptyDir},
	{"hostPath", func(v *api.VolumeSource) bool { return v.HostPath != nil }, validateHostPath},
	{"gitRepo", func(v *api.VolumeSource) bool { return v.GitRepo != nil }, nil},
	{"gcePersistentDisk", func(v *api.VolumeSource) bool { return v.GCEPersistentDisk != nil }, nil},
	{"awsElasticBlockStore", func(v *api.VolumeSource) bool { return v.AWSElasticBlockStore != nil }, nil},
	{"secret", func(v *api.VolumeSource) bool { return v.Secret != nil }, validateSecretVolume},
	{"nfs", func(v *api.VolumeSource) bool { return v.NFS != nil }, nil},
	{"iscsi", func(v *api.VolumeSource) bool { return v.ISCSI != nil }, nil},
	{"glusterfs", func(v *api.VolumeSource) bool { return v.Glusterfs != nil }, nil},
	{"flocker", func(v *api.VolumeSource) bool { return v.Flocker != nil }, nil},
	{"persistentVolumeClaim", func(v *api.VolumeSource) bool { return v.PersistentVolumeClaim != nil }, validatePVCVolume},
	{"rbd", func(v *api.VolumeSource) bool { return v.RBD != nil }, nil},
	{"cinder", func(v *api.VolumeSource) bool { return v.Cinder != nil }, nil},
	{"cephFS", func(v *api.VolumeSource) bool { return v.CephFS != nil }, nil},
	{"quobyte", func(v *api.VolumeSource) bool { return v.Quobyte != nil }, nil},
	{"downwarAPI", func(v *api.VolumeSource) bool { return v.DownwardAPI != nil }, validateDownwardAPIVolume},
	{"fc", func(v *api.VolumeSource) bool { return v.FC != nil }, nil},
	{"flexVolume", func(v *api.VolumeSource) bool { return v.FlexVolume != nil }, nil},
	{"configMap", func(v *api.VolumeSource) bool { return v.ConfigMap != nil }, validateConfigMapVolume},
	{"azureFile", func(v *api.VolumeSource) bool { return v.AzureFile != nil }, nil},
	{"vsphereVolume", func(v *api.VolumeSource) bool { return v.VsphereVolume != nil }, nil},
	{"photonPersistentDisk", func(v *api.VolumeSource) bool { return v.PhotonPersistentDisk != nil }, nil},
	{"portworxVolume", func(v *api.VolumeSource) bool { return v.PortworxVolume != nil }, nil},
	{"azureDisk", func(v *api.VolumeSource) bool { return v.AzureDisk != nil }, nil},
	{"storageos", func(v *api.VolumeSource) bool { return v.StorageOS != nil }, nil},
	{"projected", func(v *api.VolumeSource) bool { return v.Projected != nil }, validateProjectedVolume},
	{"scaleIO", func(v *api.VolumeSource) bool { return v.ScaleIO != nil }, nil},
	{"csi", func(v *api.VolumeSource) bool { return v.CSI != nil }, nil},
	{"ephemeral", func(v *api.VolumeSource) bool { return v.Ephemeral != nil }, validateEphemeralVolume},
	{"image", func(v *api.VolumeSource) bool { return v.Image != nil }, nil},
}

// validateVolumes checks volumes and returns the valid ones by name, for
// the volume mounts to refer to.
func validateVolumes(volumes []api.Volume, p *field.Path) (map[string]*api.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	vols := map[string]*api.VolumeSource{}
	for i := range volumes {
		v := &volumes[i]
		idx := p.Index(i)
		el := validateVolumeSource(&v.VolumeSource, idx)
		if v.Name == "" {
			el = append(el, field.Required(idx.Child("name"), ""))
		} else {
			el = append(el, validateDNS1123Label(v.Name, idx.Child("name"))...)
		}
		if _, dup := vols[v.Name]; dup {
			el = append(el, field.Duplicate(idx.Child("name"), v.Name))
		}
		if len(el) == 0 {
			vols[v.Name] = &v.VolumeSource
		} else {
			errs = append(errs, el...)
		}
	}
	return vols, errs
}

// validateVolumeSource checks that exactly one source is set. Sources kept
// as raw JSON (nfs, csi, ...) are not checked further: minik8s does not
// implement them.
func validateVolumeSource(src *api.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, c := range volumeSourceChecks {
		if !c.set(src) {
			continue
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(c.name), "may not specify more than 1 volume type"))
			continue
		}
		n++
		if c.check != nil {
			errs = append(errs, c.check(src, p)...)
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

func validateEmptyDir(src *api.VolumeSource, p *field.Path) field.ErrorList {
	if sl := src.EmptyDir.SizeLimit; sl != nil && sl.Sign() < 0 {
		return field.ErrorList{field.Forbidden(p.Child("emptyDir", "sizeLimit"), "SizeLimit field must be a valid resource quantity")}
	}
	return nil
}

var supportedHostPathTypes = []string{"", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"}

func validateHostPath(src *api.VolumeSource, p *field.Path) field.ErrorList {
	hp := p.Child("hostPath")
	if src.HostPath.Path == "" {
		return field.ErrorList{field.Required(hp.Child("path"), "")}
	}
	errs := validatePathNoBacksteps(src.HostPath.Path, hp.Child("path"))
	if t := src.HostPath.Type; t != nil && !slices.Contains(supportedHostPathTypes, string(*t)) {
		errs = append(errs, field.NotSupported(hp.Child("type"), string(*t), supportedHostPathTypes))
	}
	return errs
}

func validateSecretVolume(src *api.VolumeSource, p *field.Path) field.ErrorList {
	sp := p.Child("secret")
	var errs field.ErrorList
	if src.Secret.SecretName == "" {
		errs = append(errs, field.Required(sp.Child("secretName"), ""))
	}
	errs = append(errs, validateFileMode(src.Secret.DefaultMode, sp.Child("defaultMode"))...)
	for i := range src.Secret.Items {
		errs = append(errs, validateKeyToPath(&src.Secret.Items[i], sp.Child("items").Index(i))...)
	}
	return errs
}

func validateConfigMapVolume(src *api.VolumeSource, p *field.Path) field.ErrorList {
	cp := p.Child("configMap")
	var errs field.ErrorList
	if src.ConfigMap.Name == "" {
		errs = append(errs, field.Required(cp.Child("name"), ""))
	}
	errs = append(errs, validateFileMode(src.ConfigMap.DefaultMode, cp.Child("defaultMode"))...)
	for i := range src.ConfigMap.Items {
		errs = append(errs, validateKeyToPath(&src.ConfigMap.Items[i], cp.Child("items").Index(i))...)
	}
	return errs
}

func validateDownwardAPIVolume(src *api.VolumeSource, p *field.Path) field.ErrorList {
	dp := p.Child("downwardAPI")
	errs := validateFileMode(src.DownwardAPI.DefaultMode, dp.Child("defaultMode"))
	errs = append(errs, validateFileUser(src.DownwardAPI.DefaultUser, dp.Child("defaultUser"))...)
	for i := range src.DownwardAPI.Items {
		errs = append(errs, validateDownwardAPIVolumeFile(&src.DownwardAPI.Items[i], dp)...)
	}
	return errs
}

// validateDownwardAPIVolumeFile checks one file of a downwardAPI volume or
// projection. Kubernetes reports its errors under the volume's path, not
// the item's index; so does this.
func validateDownwardAPIVolumeFile(f *api.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateObjectFieldSelector(f.FieldRef, validVolumeFieldPaths, p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		if f.ResourceFieldRef.ContainerName == "" {
			errs = append(errs, field.Required(p.Child("resourceFieldRef", "containerName"), ""))
		} else {
			errs = append(errs, validateResourceFieldSelector(f.ResourceFieldRef, p.Child("resourceFieldRef"))...)
		}
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	errs = append(errs, validateFileMode(f.Mode, p.Child("mode"))...)
	return append(errs, validateFileUser(f.User, p.Child("user"))...)
}

// validateProjectedVolume checks a projected volume as Kubernetes'
// validateProjectedVolumeSource does: one source per entry, names, paths
// unique across the sources, token lifetimes of 10 minutes to 2^32 seconds.
func validateProjectedVolume(src *api.VolumeSource, p *field.Path) field.ErrorList {
	pp := p.Child("projected")
	pr := src.Projected
	errs := validateFileMode(pr.DefaultMode, pp.Child("defaultMode"))
	errs = append(errs, validateFileUser(pr.DefaultUser, pp.Child("defaultUser"))...)
	paths := map[string]bool{}
	unique := func(path string, bad any) {
		if path == "" {
			return
		}
		if paths[path] {
			errs = append(errs, field.Invalid(pp, bad, "conflicting duplicate paths"))
		}
		paths[path] = true
	}
	for i := range pr.Sources {
		s := &pr.Sources[i]
		sp := pp.Child("sources").Index(i)
		n := 0
		if s.Secret != nil {
			n++
			if s.Secret.Name == "" {
				errs = append(errs, field.Required(sp.Child("secret", "name"), ""))
			}
			for j := range s.Secret.Items {
				errs = append(errs, validateKeyToPath(&s.Secret.Items[j], sp.Child("secret", "items").Index(j))...)
				unique(s.Secret.Items[j].Path, s.Secret.Name)
			}
		}
		if s.ConfigMap != nil {
			n++
			if s.ConfigMap.Name == "" {
				errs = append(errs, field.Required(sp.Child("configMap", "name"), ""))
			}
			for j := range s.ConfigMap.Items {
				errs = append(errs, validateKeyToPath(&s.ConfigMap.Items[j], sp.Child("configMap", "items").Index(j))...)
				unique(s.ConfigMap.Items[j].Path, s.ConfigMap.Name)
			}
		}
		if s.DownwardAPI != nil {
			n++
			for j := range s.DownwardAPI.Items {
				f := &s.DownwardAPI.Items[j]
				errs = append(errs, validateDownwardAPIVolumeFile(f, sp.Child("downwardAPI"))...)
				unique(f.Path, f.Path)
			}
		}
		if t := s.ServiceAccountToken; t != nil {
			n++
			tp := sp.Child("serviceAccountToken")
			switch exp := t.ExpirationSeconds; {
			case exp == nil:
				errs = append(errs, field.Required(tp.Child("expirationSeconds"), ""))
			case *exp < 10*60:
				errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
			case *exp > 1<<32:
				errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
			}
			// Kubernetes reports the token's path under the volume, not
			// the source.
			if t.Path == "" {
				errs = append(errs, field.Required(pp.Child("path"), ""))
			} else {
				errs = append(errs, validateLocalNonReservedPath(t.Path, pp.Child("path"))...)
			}
			errs = append(errs, validateFileUser(t.User, tp.Child("user"))...)
		}
		if b := s.ClusterTrustBundle; b != nil {
			n++
			errs = append(errs, validateClusterTrustBundleProjection(b, sp.Child("clusterTrustBundle"))...)
			unique(b.Path, b.Path)
		}
		if c := s.PodCertificate; c != nil {
			n++
			cp := sp.Child("podCertificate")
			errs = append(errs, validatePodCertificateProjection(c, cp)...)
			for _, f := range []struct{ path, name string }{
				{c.CredentialBundlePath, "credentialBundlePath"}, {c.KeyPath, "keyPath"}, {c.CertificateChainPath, "certificateChainPath"},
			} {
				if f.path != "" {
					errs = append(errs, validateLocalNonReservedPath(f.path, cp.Child(f.name))...)
					unique(f.path, f.path)
				}
			}
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

// validateClusterTrustBundleProjection is kube's check of a
// clusterTrustBundle source: a bundle's name or a signer with a label
// selector, never both, and a path.
func validateClusterTrustBundleProjection(b *api.ClusterTrustBundleProjection, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Name != nil && b.SignerName != nil:
		errs = append(errs, field.Invalid(p, ctbProjectionValue{b}, "only one of name and signerName may be used"))
	case b.Name != nil:
		name := *b.Name
		if name == "" {
			errs = append(errs, field.Required(p.Child("name"), "must be a valid object name"))
		}
		// A name with a colon names a signer's bundle: "example.com:signer:NAME".
		signer := ""
		if i := strings.LastIndex(name, ":"); i >= 0 {
			signer = strings.ReplaceAll(name[:i], ":", "/")
		}
		for _, msg := range clusterTrustBundleName(signer)(name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), name, "not a valid clustertrustbundlename: "+msg))
		}
		if b.LabelSelector != nil {
			errs = append(errs, field.Invalid(p.Child("labelSelector"), selectorValue{b.LabelSelector}, "labelSelector must be unset if name is specified"))
		}
	case b.SignerName != nil:
		if *b.SignerName == "" {
			errs = append(errs, field.Required(p.Child("signerName"), "must be a valid signer name"))
		}
		errs = append(errs, ValidateSignerName(p.Child("signerName"), *b.SignerName)...)
		errs = append(errs, ValidateLabelSelector(b.LabelSelector, LabelSelectorOptions{}, p.Child("labelSelector"))...)
	default:
		errs = append(errs, field.Required(p, "either name or signerName must be specified"))
	}
	if b.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateFileUser(b.User, p.Child("user"))...)
	return append(errs, validateLocalNonReservedPath(b.Path, p.Child("path"))...)
}

// ctbProjectionValue renders a clusterTrustBundle source in an error as
// kube-apiserver does: its internal type as JSON, whose fields have no
// tags.
type ctbProjectionValue struct {
	b *api.ClusterTrustBundleProjection
}

func (v ctbProjectionValue) String() string {
	out, _ := json.Marshal(struct {
		Name, SignerName *string
		LabelSelector    *api.LabelSelector
		Optional         *bool
		Path             string
		User             *int64
	}{v.b.Name, v.b.SignerName, v.b.LabelSelector, v.b.Optional, v.b.Path, v.b.User})
	return string(out)
}

// selectorValue renders a label selector in an error as kube-apiserver
// does: JSON (it is metav1's type, tags and all, inside kube's internal
// types too).
type selectorValue struct{ s *api.LabelSelector }

func (v selectorValue) String() string {
	out, _ := json.Marshal(v.s)
	return string(out)
}

// podCertificateKeyTypes are the key types a kubelet generates.
var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// Bounds of a pod certificate's maxExpirationSeconds (kube's
// certificates.MinMaxExpirationSeconds and friends): 1 hour to 91 days,
// 24 hours for the kubernetes.io signers.
const (
	minMaxExpirationSeconds           = 60 * 60
	maxMaxExpirationSeconds           = 91 * 24 * 60 * 60
	kubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
)

// isKubernetesSignerName reports a signer reserved by the Kubernetes
// project (kubernetes.io or a subdomain).
func isKubernetesSignerName(signer string) bool {
	host, _, _ := strings.Cut(signer, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// validatePodCertificateProjection is kube's check of a podCertificate
// source, its paths aside (they share the volume's uniqueness check).
func validatePodCertificateProjection(c *api.PodCertificateProjection, p *field.Path) field.ErrorList {
	errs := ValidateSignerName(p.Child("signerName"), c.SignerName)
	if c.UserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(c.UserAnnotations, p.Child("userAnnotations"))...)
	}
	errs = append(errs, validateFileUser(c.User, p.Child("user"))...)
	if !slices.Contains(podCertificateKeyTypes, c.KeyType) {
		errs = append(errs, field.NotSupported(p.Child("keyType"), c.KeyType, podCertificateKeyTypes))
	}
	if exp := c.MaxExpirationSeconds; exp != nil {
		if *exp < minMaxExpirationSeconds {
			errs = append(errs, field.Invalid(p.Child("maxExpirationSeconds"), *exp, fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", minMaxExpirationSeconds)))
		}
		limit := maxMaxExpirationSeconds
		if isKubernetesSignerName(c.SignerName) {
			limit = kubernetesMaxMaxExpirationSeconds
		}
		if int(*exp) > limit {
			errs = append(errs, field.Invalid(p.Child("maxExpirationSeconds"), *exp, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", limit)))
		}
	}
	if c.CredentialBundlePath == "" && c.KeyPath == "" && c.CertificateChainPath == "" {
		errs = append(errs, field.Required(p, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}

// validateUserAnnotations is kube's ValidateUserAnnotations: domain-prefixed
// keys (compared in lower case) within the annotations' total size.
func validateUserAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		key := strings.ToLower(k)
		switch msgs := naming.IsQualifiedName(key); {
		case key == "":
			errs = append(errs, field.Required(p, ""))
		case len(msgs) > 0:
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, key, m))
			}
		case strings.Count(key, "/") != 1:
			errs = append(errs, field.Invalid(p, key, "must be a domain-prefixed key (such as \"acme.io/foo\")"))
		}
		total += len(k) + len(annotations[k])
	}
	if total > TotalAnnotationSizeLimitB {
		errs = append(errs, field.TooLong(p, "", TotalAnnotationSizeLimitB))
	}
	return errs
}

// validateFileUser checks the owner of projected files (0 to 2147483647,
// as Kubernetes' validateUserField).
func validateFileUser(user *int64, p *field.Path) field.ErrorList {
	if user != nil && (*user < 0 || *user > 2147483647) {
		return field.ErrorList{field.Invalid(p, *user, "must be between 0 and 2147483647, inclusive")}
	}
	return nil
}

func validatePVCVolume(src *api.VolumeSource, p *field.Path) field.ErrorList {
	if src.PersistentVolumeClaim.ClaimName == "" {
		return field.ErrorList{field.Required(p.Child("persistentVolumeClaim", "claimName"), "")}
	}
	return nil
}

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0o777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeErrorMsg)}
	}
	return nil
}

func validateKeyToPath(kp *api.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if kp.Key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	}
	if kp.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	errs = append(errs, validateFileMode(kp.Mode, p.Child("mode"))...)
	return errs
}

func validatePathNoBacksteps(target string, p *field.Path) field.ErrorList {
	for _, part := range strings.Split(target, "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(errs, validatePathNoBacksteps(target, p)...)
}

func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}

// Containers.

func validateContainers(spec *api.PodSpec, vols map[string]*api.VolumeSource, grace *int64, p *field.Path) field.ErrorList {
	cs := spec.Containers
	if len(cs) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range cs {
		c := &cs[i]
		cp := p.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, spec.RestartPolicy, cp)...)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names[c.Name] = true
		if c.Lifecycle != nil {
			errs = append(errs, validateLifecycle(c.Lifecycle, grace, cp.Child("lifecycle"))...)
		}
		errs = append(errs, validateProbes(c, grace, cp)...)
		errs = append(errs, validateContainerRestartRules(c.RestartPolicy, c.RestartPolicyRules, cp)...)
	}
	return append(errs, checkHostPortConflicts(cs, p)...)
}

func validateInitContainers(spec *api.PodSpec, vols map[string]*api.VolumeSource, grace *int64, p *field.Path) field.ErrorList {
	cs := spec.InitContainers
	var errs field.ErrorList
	names := map[string]bool{}
	for _, c := range spec.Containers {
		names[c.Name] = true
	}
	for i := range cs {
		c := &cs[i]
		cp := p.Index(i)
		errs = append(errs, validateContainerCommon(c, vols, spec.RestartPolicy, cp)...)
		errs = append(errs, validateInitContainerRestartRules(c.RestartPolicy, c.RestartPolicyRules, cp)...)
		restartAlways := c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways
		if names[c.Name] {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else if c.Name != "" {
			names[c.Name] = true
		}
		errs = append(errs, checkHostPortConflicts([]api.Container{*c}, p)...)
		if restartAlways {
			if c.Lifecycle != nil {
				errs = append(errs, validateLifecycle(c.Lifecycle, grace, cp.Child("lifecycle"))...)
			}
			errs = append(errs, validateProbes(c, grace, cp)...)
			continue
		}
		for j, rp := range c.ResizePolicy {
			if rp.RestartPolicy == api.RestartContainer {
				errs = append(errs, field.Invalid(cp.Child("resizePolicy").Index(j).Child("restartPolicy"), string(rp.RestartPolicy),
					"must not be set to 'RestartContainer' for non-sidecar initContainers"))
			}
		}
		const msg = "may not be set for init containers without restartPolicy=Always"
		if c.Lifecycle != nil {
			errs = append(errs, field.Forbidden(cp.Child("lifecycle"), msg))
		}
		if c.LivenessProbe != nil {
			errs = append(errs, field.Forbidden(cp.Child("livenessProbe"), msg))
		}
		if c.ReadinessProbe != nil {
			errs = append(errs, field.Forbidden(cp.Child("readinessProbe"), msg))
		}
		if c.StartupProbe != nil {
			errs = append(errs, field.Forbidden(cp.Child("startupProbe"), msg))
		}
	}
	return errs
}

func validateContainerCommon(c *api.Container, vols map[string]*api.VolumeSource, podRestart api.RestartPolicy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, validateDNS1123Label(c.Name, p.Child("name"))...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case api.TerminationMessageReadFile, api.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), string(c.TerminationMessagePolicy),
			[]string{"File", "FallbackToLogsOnError"}))
	}
	errs = append(errs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, validateVolumeMounts(c, vols, p.Child("volumeMounts"))...)
	switch c.ImagePullPolicy {
	case api.PullAlways, api.PullIfNotPresent, api.PullNever:
	case "":
		errs = append(errs, field.Required(p.Child("imagePullPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), string(c.ImagePullPolicy), []string{"Always", "IfNotPresent", "Never"}))
	}
	errs = append(errs, validateResourceRequirements(&c.Resources, p.Child("resources"))...)
	errs = append(errs, validateResizePolicy(c.ResizePolicy, p.Child("resizePolicy"), podRestart)...)
	errs = append(errs, validateSecurityContext(c.SecurityContext, p.Child("securityContext"))...)
	return errs
}

var supportedProtocols = []string{"SCTP", "TCP", "UDP"}

func validateContainerPorts(ports []api.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		pp := p.Index(i)
		if port.Name != "" {
			if msgs := naming.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
				}
			} else if names[port.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			} else {
				names[port.Name] = true
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else {
			for _, msg := range naming.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range naming.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
			}
		}
		errs = append(errs, validateProtocol(port.Protocol, pp.Child("protocol"))...)
	}
	return errs
}

func validateProtocol(proto api.Protocol, p *field.Path) field.ErrorList {
	if proto == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !slices.Contains(supportedProtocols, string(proto)) {
		return field.ErrorList{field.NotSupported(p, string(proto), supportedProtocols)}
	}
	return nil
}

// checkHostPortConflicts reports a host port (per protocol and host IP)
// used twice.
func checkHostPortConflicts(cs []api.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range cs {
		for j, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen[key] {
				errs = append(errs, field.Duplicate(p.Index(i).Child("ports").Index(j).Child("hostPort"), key))
			}
			seen[key] = true
		}
	}
	return errs
}

var (
	validEnvFieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
		"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
	// downwardAPIFieldLabels are the pod fields a field selector can name
	// at all (Kubernetes' conversion accepts these before validation
	// narrows them to validEnvFieldPaths).
	downwardAPIFieldLabels = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
		"metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
		"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}
	// validVolumeFieldPaths are the pod fields a downwardAPI volume file
	// can hold.
	validVolumeFieldPaths = []string{"metadata.annotations", "metadata.labels", "metadata.name",
		"metadata.namespace", "metadata.uid"}
	validResourceFieldPaths = []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory",
		"requests.cpu", "requests.ephemeral-storage", "requests.memory"}
)

func validateEnv(vars []api.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range naming.IsEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), ev.Name, msg))
			}
		}
		errs = append(errs, validateEnvVarValueFrom(ev, ip.Child("valueFrom"))...)
	}
	return errs
}

func validateEnvVarValueFrom(ev api.EnvVar, p *field.Path) field.ErrorList {
	vf := ev.ValueFrom
	if vf == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	if vf.FieldRef != nil {
		n++
		errs = append(errs, validateObjectFieldSelector(vf.FieldRef, validEnvFieldPaths, p.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		errs = append(errs, validateResourceFieldSelector(vf.ResourceFieldRef, p.Child("resourceFieldRef"))...)
	}
	if vf.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, p.Child("configMapKeyRef"))...)
	}
	if vf.SecretKeyRef != nil {
		n++
		errs = append(errs, validateKeySelector(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, p.Child("secretKeyRef"))...)
	}
	if vf.FileKeyRef != nil {
		n++
		errs = append(errs, validateFileKeySelector(vf.FileKeyRef, p.Child("fileKeyRef"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	return errs
}

// splitSubscript splits "metadata.labels['app']" into its path and key.
func splitSubscript(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	before, after, ok := strings.Cut(fieldPath, "['")
	if !ok {
		return fieldPath, "", false
	}
	return before, strings.TrimSuffix(after, "']"), true
}

func validateObjectFieldSelector(fs *api.ObjectFieldSelector, valid []string, p *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(p.Child("fieldPath"), "")}
	}
	fp, subscript, subscripted := splitSubscript(fs.FieldPath)
	var convErr string
	switch {
	case fs.APIVersion != "v1":
		convErr = "unsupported pod version: " + fs.APIVersion
	case subscripted && fp != "metadata.annotations" && fp != "metadata.labels":
		convErr = "field label does not support subscript: " + fs.FieldPath
	case !subscripted && !slices.Contains(downwardAPIFieldLabels, fp):
		convErr = "field label not supported: " + fs.FieldPath
	}
	if convErr != "" {
		return field.ErrorList{field.Invalid(p.Child("fieldPath"), fs.FieldPath, "error converting fieldPath: "+convErr)}
	}
	if subscripted {
		if fp == "metadata.annotations" {
			subscript = strings.ToLower(subscript)
		}
		return validateQualifiedName(subscript, p)
	}
	if !slices.Contains(valid, fp) {
		sorted := append([]string(nil), valid...)
		sort.Strings(sorted)
		return field.ErrorList{field.NotSupported(p.Child("fieldPath"), fp, sorted)}
	}
	return nil
}

func validateResourceFieldSelector(fs *api.ResourceFieldSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case fs.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !slices.Contains(validResourceFieldPaths, fs.Resource) &&
		!strings.HasPrefix(fs.Resource, "requests.hugepages-") && !strings.HasPrefix(fs.Resource, "limits.hugepages-"):
		errs = append(errs, field.NotSupported(p.Child("resource"), fs.Resource, validResourceFieldPaths))
	}
	if fs.Divisor.IsZero() {
		return errs
	}
	memoryDivisors := []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
	d := fs.Divisor.String()
	switch fs.Resource {
	case "limits.cpu", "requests.cpu":
		if d != "1m" && d != "1" {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !slices.Contains(memoryDivisors, d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !slices.Contains(memoryDivisors, d) {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource"))
		}
	}
	return errs
}

// validateKeySelector checks a configMapKeyRef or secretKeyRef.
func validateKeySelector(name, key string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(p.Child("name"), name, msg))
	}
	if key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	} else {
		for _, msg := range naming.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(p.Child("key"), key, msg))
		}
	}
	return errs
}

func validateEnvFrom(vars []api.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Prefix != "" {
			for _, msg := range naming.IsEnvVarName(ev.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.ConfigMapRef.Name, ip.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			errs = append(errs, validateEnvSourceName(ev.SecretRef.Name, ip.Child("secretRef"))...)
		}
		if n == 0 {
			errs = append(errs, field.Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func validateEnvSourceName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "")}
	}
	var errs field.ErrorList
	for _, msg := range naming.NameIsDNSSubdomain(name, true) {
		errs = append(errs, field.Invalid(p.Child("name"), name, msg))
	}
	return errs
}

var supportedMountPropagations = []string{"Bidirectional", "HostToContainer", "None"}

func validateVolumeMounts(c *api.Container, vols map[string]*api.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mountPoints := map[string]bool{}
	for i, m := range c.VolumeMounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if _, ok := vols[m.Name]; !ok {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if mountPoints[m.MountPath] {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPoints[m.MountPath] = true
		if v, ok := vols[m.Name]; ok && v.Image != nil {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPath"), m.SubPath, "not allowed in image volume sources"))
			}
			if m.SubPathExpr != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, ip.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, ip.Child("subPathExpr"))...)
		}
		if mp := m.MountPropagation; mp != nil {
			pp := ip.Child("mountPropagation")
			if !slices.Contains(supportedMountPropagations, *mp) {
				errs = append(errs, field.NotSupported(pp, *mp, supportedMountPropagations))
			}
			privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
			if *mp == "Bidirectional" && !privileged {
				errs = append(errs, field.Forbidden(pp, "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		errs = append(errs, validateMountRecursiveReadOnly(m, p.Child("recursiveReadOnly"))...)
	}
	return errs
}

// Probes and handlers.

func validateProbes(c *api.Container, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pr := c.LivenessProbe; pr != nil {
		errs = append(errs, validateProbe(pr, grace, p.Child("livenessProbe"))...)
		if pr.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(p.Child("livenessProbe", "successThreshold"), pr.SuccessThreshold, "must be 1"))
		}
	}
	if pr := c.ReadinessProbe; pr != nil {
		errs = append(errs, validateProbe(pr, grace, p.Child("readinessProbe"))...)
		if pr.TerminationGracePeriodSeconds != nil {
			errs = append(errs, field.Invalid(p.Child("readinessProbe", "terminationGracePeriodSeconds"), pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	if pr := c.StartupProbe; pr != nil {
		errs = append(errs, validateProbe(pr, grace, p.Child("startupProbe"))...)
		if pr.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(p.Child("startupProbe", "successThreshold"), pr.SuccessThreshold, "must be 1"))
		}
	}
	return errs
}

func validateProbe(pr *api.Probe, grace *int64, p *field.Path) field.ErrorList {
	h := pr.ProbeHandler
	errs := validateHandler(handler{exec: h.Exec, httpGet: h.HTTPGet, tcpSocket: h.TCPSocket, grpc: h.GRPC}, grace, p)
	errs = append(errs, validateNonnegative(int64(pr.InitialDelaySeconds), p.Child("initialDelaySeconds"))...)
	errs = append(errs, validateNonnegative(int64(pr.TimeoutSeconds), p.Child("timeoutSeconds"))...)
	errs = append(errs, validateNonnegative(int64(pr.PeriodSeconds), p.Child("periodSeconds"))...)
	errs = append(errs, validateNonnegative(int64(pr.SuccessThreshold), p.Child("successThreshold"))...)
	errs = append(errs, validateNonnegative(int64(pr.FailureThreshold), p.Child("failureThreshold"))...)
	if g := pr.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

type handler struct {
	exec      *api.ExecAction
	httpGet   *api.HTTPGetAction
	tcpSocket *api.TCPSocketAction
	grpc      *api.GRPCAction
	sleep     *api.SleepAction
}

func validateLifecycle(l *api.Lifecycle, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, h := range []struct {
		h    *api.LifecycleHandler
		name string
	}{{l.PostStart, "postStart"}, {l.PreStop, "preStop"}} {
		if h.h != nil {
			errs = append(errs, validateHandler(handler{exec: h.h.Exec, httpGet: h.h.HTTPGet, tcpSocket: h.h.TCPSocket, sleep: h.h.Sleep}, grace, p.Child(h.name))...)
		}
	}
	return errs
}

func validateHandler(h handler, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(set bool, name string, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, check()...)
	}
	one(h.exec != nil, "exec", func() field.ErrorList {
		if len(h.exec.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("exec", "command"), "")}
		}
		return nil
	})
	one(h.httpGet != nil, "httpGet", func() field.ErrorList {
		hp := p.Child("httpGet")
		var e field.ErrorList
		if h.httpGet.Path == "" {
			e = append(e, field.Required(hp.Child("path"), ""))
		}
		e = append(e, ValidatePortNumOrName(h.httpGet.Port, hp.Child("port"))...)
		if s := h.httpGet.Scheme; s != api.URISchemeHTTP && s != api.URISchemeHTTPS {
			e = append(e, field.NotSupported(hp.Child("scheme"), string(s), []string{"HTTP", "HTTPS"}))
		}
		for _, hdr := range h.httpGet.HTTPHeaders {
			for _, msg := range naming.IsHTTPHeaderName(hdr.Name) {
				e = append(e, field.Invalid(hp.Child("httpHeaders"), hdr.Name, msg))
			}
		}
		return e
	})
	one(h.tcpSocket != nil, "tcpSocket", func() field.ErrorList {
		return ValidatePortNumOrName(h.tcpSocket.Port, p.Child("tcpSocket", "port"))
	})
	one(h.grpc != nil, "grpc", func() field.ErrorList {
		return ValidatePortNumOrName(api.FromInt(h.grpc.Port), p.Child("grpc", "port"))
	})
	one(h.sleep != nil, "sleep", func() field.ErrorList {
		if grace != nil && (h.sleep.Seconds < 0 || h.sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(p.Child("sleep"), h.sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a handler type"))
	}
	return errs
}

// ValidatePortNumOrName checks a port given as a number (1-65535) or as an
// IANA service name.
func ValidatePortNumOrName(port api.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == api.String {
		for _, msg := range naming.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
		return errs
	}
	for _, msg := range naming.IsValidPortNum(int(port.IntVal)) {
		errs = append(errs, field.Invalid(p, port.IntVal, msg))
	}
	return errs
}

// Security contexts.

func validateSecurityContext(sc *api.SecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.RunAsUser != nil {
		for _, msg := range naming.IsValidUserID(*sc.RunAsUser) {
			errs = append(errs, field.Invalid(p.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range naming.IsValidGroupID(*sc.RunAsGroup) {
			errs = append(errs, field.Invalid(p.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	if sc.ProcMount != nil {
		switch *sc.ProcMount {
		case api.DefaultProcMount, api.UnmaskedProcMount:
		default:
			errs = append(errs, field.NotSupported(p.Child("procMount"), string(*sc.ProcMount), []string{"Default", "Unmasked"}))
		}
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(p, goValue{sc}, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(p, goValue{sc}, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	errs = append(errs, validateWindowsOptions(sc.WindowsOptions, p.Child("windowsOptions"))...)
	errs = append(errs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	return errs
}

// validateProcMountHostUsers: an Unmasked /proc only in a user namespace
// (hostUsers false), as Kubernetes checks each container.
func validateProcMountHostUsers(spec *api.PodSpec, p *field.Path) field.ErrorList {
	if spec.HostUsers != nil && !*spec.HostUsers {
		return nil
	}
	var errs field.ErrorList
	check := func(cs []api.Container, cp *field.Path) {
		for i := range cs {
			if sc := cs[i].SecurityContext; sc != nil && sc.ProcMount != nil && *sc.ProcMount == api.UnmaskedProcMount {
				errs = append(errs, field.Invalid(cp.Index(i).Child("securityContext", "procMount"), string(*sc.ProcMount), "`hostUsers` must be false to use `Unmasked`"))
			}
		}
	}
	check(spec.InitContainers, p.Child("initContainers"))
	check(spec.Containers, p.Child("containers"))
	for i := range spec.EphemeralContainers {
		if sc := spec.EphemeralContainers[i].SecurityContext; sc != nil && sc.ProcMount != nil && *sc.ProcMount == api.UnmaskedProcMount {
			errs = append(errs, field.Invalid(p.Child("ephemeralContainers").Index(i).Child("securityContext", "procMount"), string(*sc.ProcMount), "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	return errs
}

// ValidateAppArmorProfile checks an appArmorProfile at path p, as
// Kubernetes' ValidateAppArmorProfileField.
func ValidateAppArmorProfile(ap *api.AppArmorProfile, p *field.Path) field.ErrorList {
	return validateAppArmorProfile(ap, p)
}

func validateAppArmorProfile(ap *api.AppArmorProfile, p *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	var errs field.ErrorList
	switch ap.Type {
	case api.AppArmorProfileTypeLocalhost:
		if ap.LocalhostProfile == nil {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
			break
		}
		lp := *ap.LocalhostProfile
		if strings.TrimSpace(lp) != lp {
			errs = append(errs, field.Invalid(p.Child("localhostProfile"), lp, "must not be padded with whitespace"))
		} else if lp == "" {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
		const maxLocalhostProfileLength = 4095 // PATH_MAX - 1
		if len(lp) > maxLocalhostProfileLength {
			errs = append(errs, field.TooLong(p.Child("localhostProfile"), "", maxLocalhostProfileLength))
		}
	case api.AppArmorProfileTypeRuntimeDefault, api.AppArmorProfileTypeUnconfined:
		if ap.LocalhostProfile != nil {
			errs = append(errs, field.Invalid(p.Child("localhostProfile"), *ap.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when appArmorProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), string(ap.Type), []string{"Localhost", "RuntimeDefault", "Unconfined"}))
	}
	return errs
}

// Limits of Windows' names, as Kubernetes checks them.
const (
	maxGMSACredentialSpecLengthInKiB = 64
	maxRunAsUserNameDomainLength     = 256
	maxRunAsUserNameUserLength       = 104
)

var (
	ctrlRegexp                    = mustCompile(`[[:cntrl:]]+`)
	validNetBiosRegexp            = mustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`)
	windowsDomainDNSRegexp        = mustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`)
	invalidUserNameCharsRegexp    = mustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`)
	invalidUserNameDotsSpacesRegx = mustCompile(`^[\. ]+$`)
)

// validateWindowsOptions is Kubernetes' validateWindowsSecurityContextOptions.
func validateWindowsOptions(w *api.WindowsSecurityContextOptions, p *field.Path) field.ErrorList {
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	if w.GMSACredentialSpecName != nil {
		errs = append(errs, validateDNS1123Subdomain(*w.GMSACredentialSpecName, p.Child("gmsaCredentialSpecName"))...)
	}
	if w.GMSACredentialSpec != nil {
		if l := len(*w.GMSACredentialSpec); l == 0 {
			errs = append(errs, field.Invalid(p.Child("gmsaCredentialSpec"), *w.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if l > maxGMSACredentialSpecLengthInKiB*1024 {
			errs = append(errs, field.Invalid(p.Child("gmsaCredentialSpec"), *w.GMSACredentialSpec,
				fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecLengthInKiB)))
		}
	}
	if w.RunAsUserName == nil {
		return errs
	}
	name := *w.RunAsUserName
	up := p.Child("runAsUserName")
	parts := strings.Split(name, "\\")
	switch {
	case name == "":
		return append(errs, field.Invalid(up, name, "runAsUserName cannot be an empty string"))
	case ctrlRegexp.MatchString(name):
		return append(errs, field.Invalid(up, name, "runAsUserName cannot contain control characters"))
	case len(parts) > 2:
		return append(errs, field.Invalid(up, name, "runAsUserName cannot contain more than one backslash"))
	}
	user, domain, hasDomain := parts[0], "", len(parts) == 2
	if hasDomain {
		domain, user = parts[0], parts[1]
	}
	if len(domain) >= maxRunAsUserNameDomainLength {
		errs = append(errs, field.Invalid(up, name, fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength)))
	}
	if hasDomain && !validNetBiosRegexp.MatchString(domain) && !windowsDomainDNSRegexp.MatchString(domain) {
		errs = append(errs, field.Invalid(up, name, "runAsUserName's Domain doesn't match the NetBios nor the DNS format"))
	}
	if l := len(user); l == 0 {
		errs = append(errs, field.Invalid(up, name, "runAsUserName's User cannot be empty"))
	} else if l > maxRunAsUserNameUserLength {
		errs = append(errs, field.Invalid(up, name, fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength)))
	}
	if invalidUserNameDotsSpacesRegx.MatchString(user) {
		errs = append(errs, field.Invalid(up, name, `runAsUserName's User cannot contain only periods or spaces`))
	}
	if invalidUserNameCharsRegexp.MatchString(user) {
		errs = append(errs, field.Invalid(up, name, `runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`))
	}
	return errs
}

func validateSeccompProfile(sp *api.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case "Localhost", "RuntimeDefault", "Unconfined":
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), sp.Type, []string{"Localhost", "RuntimeDefault", "Unconfined"}))
	}
	if sp.Type == "Localhost" {
		if sp.LocalhostProfile == nil {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, validateLocalDescendingPath(*sp.LocalhostProfile, p.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(p.Child("localhostProfile"), goValue{sp}, "can only be set when seccomp type is Localhost"))
	}
	return errs
}

const sysctlSegmentFmt = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"

var sysctlNameRegexp = mustCompile("^(" + sysctlSegmentFmt + "[\\./])*" + sysctlSegmentFmt + "$")

func validatePodSecurityContext(spec *api.PodSpec, p *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		for _, msg := range naming.IsValidGroupID(*sc.FSGroup) {
			errs = append(errs, field.Invalid(p.Child("fsGroup"), *sc.FSGroup, msg))
		}
	}
	if sc.RunAsUser != nil {
		for _, msg := range naming.IsValidUserID(*sc.RunAsUser) {
			errs = append(errs, field.Invalid(p.Child("runAsUser"), *sc.RunAsUser, msg))
		}
	}
	if sc.RunAsGroup != nil {
		for _, msg := range naming.IsValidGroupID(*sc.RunAsGroup) {
			errs = append(errs, field.Invalid(p.Child("runAsGroup"), *sc.RunAsGroup, msg))
		}
	}
	for i, gid := range sc.SupplementalGroups {
		for _, msg := range naming.IsValidGroupID(gid) {
			errs = append(errs, field.Invalid(p.Child("supplementalGroups").Index(i), gid, msg))
		}
	}
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace && spec.HostPID {
		errs = append(errs, field.Invalid(p.Child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	names := map[string]bool{}
	for i, s := range sc.Sysctls {
		np := p.Child("sysctls").Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(np, ""))
		case len(s.Name) > 253 || !sysctlNameRegexp.MatchString(s.Name):
			errs = append(errs, field.Invalid(np, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", 253, sysctlNameRegexp)))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(np, s.Name))
		}
		names[s.Name] = true
		if spec.HostNetwork && (strings.HasPrefix(s.Name, "net.") || strings.HasPrefix(s.Name, "net/")) {
			errs = append(errs, field.Invalid(np, s.Name, "may not be specified when 'hostNetwork' is true"))
		}
		if spec.HostIPC && isIPCSysctl(s.Name) {
			errs = append(errs, field.Invalid(np, s.Name, "may not be specified when 'hostIPC' is true"))
		}
	}
	if fp := sc.FSGroupChangePolicy; fp != nil && *fp != "OnRootMismatch" && *fp != "Always" {
		errs = append(errs, field.NotSupported(p.Child("fsGroupChangePolicy"), *fp, []string{"Always", "OnRootMismatch"}))
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, validateWindowsOptions(sc.WindowsOptions, p.Child("windowsOptions"))...)
	errs = append(errs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	if sp := sc.SupplementalGroupsPolicy; sp != nil && *sp != api.SupplementalGroupsPolicyMerge && *sp != api.SupplementalGroupsPolicyStrict {
		errs = append(errs, field.NotSupported(p.Child("supplementalGroupsPolicy"), string(*sp), []string{"Merge", "Strict"}))
	}
	if cp := sc.SELinuxChangePolicy; cp != nil && *cp != api.SELinuxChangePolicyRecursive && *cp != api.SELinuxChangePolicyMountOption {
		errs = append(errs, field.NotSupported(p.Child("seLinuxChangePolicy"), string(*cp), []string{"MountOption", "Recursive"}))
	}
	return errs
}

func isIPCSysctl(name string) bool {
	name = strings.ReplaceAll(name, "/", ".")
	for _, prefix := range []string{"kernel.shm", "kernel.msg", "fs.mqueue."} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return name == "kernel.sem"
}

// Scheduling constraints.

// ValidateTolerations checks tolerations: key a label name, operator Equal
// (the default) or Exists, an empty key only with Exists, a value only with
// Equal, tolerationSeconds only with NoExecute.
func ValidateTolerations(tols []api.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tols {
		ip := p.Index(i)
		if t.Key != "" {
			errs = append(errs, ValidateLabelName(t.Key, ip.Child("key"))...)
		}
		if t.Key == "" && t.Operator != api.TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), string(t.Operator),
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != api.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), string(t.Effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case api.TolerationOpEqual, "":
			if msgs := naming.IsValidLabelValue(t.Value); len(msgs) != 0 {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case api.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), string(t.Operator), []string{"Equal", "Exists"}))
		}
		if t.Effect != "" {
			errs = append(errs, validateTaintEffect(t.Effect, ip.Child("effect"))...)
		}
	}
	return errs
}

func validateTaintEffect(e api.TaintEffect, p *field.Path) field.ErrorList {
	switch e {
	case api.TaintEffectNoSchedule, api.TaintEffectPreferNoSchedule, api.TaintEffectNoExecute:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, string(e), []string{"NoSchedule", "PreferNoSchedule", "NoExecute"})}
}

func validateAffinity(a *api.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			errs = append(errs, ValidateNodeSelector(req, false, np.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if t.Weight <= 0 || t.Weight > 100 {
				errs = append(errs, field.Invalid(tp.Child("weight"), t.Weight, "must be in the range 1-100"))
			}
			// Preferred terms may name label values no node has yet.
			errs = append(errs, validateNodeSelectorTerm(t.Preference, true, tp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution,
			pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution,
			pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))...)
	}
	return errs
}

func validatePodAffinityTerms(required []api.PodAffinityTerm, preferred []api.WeightedPodAffinityTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range required {
		errs = append(errs, validatePodAffinityTerm(t, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, t := range preferred {
		tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if t.Weight <= 0 || t.Weight > 100 {
			errs = append(errs, field.Invalid(tp.Child("weight"), t.Weight, "must be in the range 1-100"))
		}
		errs = append(errs, validatePodAffinityTerm(t.PodAffinityTerm, tp.Child("podAffinityTerm"))...)
	}
	return errs
}

func validatePodAffinityTerm(t api.PodAffinityTerm, p *field.Path) field.ErrorList {
	errs := ValidateLabelSelector(t.LabelSelector, LabelSelectorOptions{}, p.Child("labelSelector"))
	errs = append(errs, ValidateLabelSelector(t.NamespaceSelector, LabelSelectorOptions{}, p.Child("namespaceSelector"))...)
	for i, ns := range t.Namespaces {
		for _, msg := range naming.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(p.Child("namespaces").Index(i), ns, msg))
		}
	}
	errs = append(errs, validateLabelKeys(t.MatchLabelKeys, t.LabelSelector, p.Child("matchLabelKeys"))...)
	errs = append(errs, validateLabelKeys(t.MismatchLabelKeys, t.LabelSelector, p.Child("mismatchLabelKeys"))...)
	for i, k := range t.MatchLabelKeys {
		if slices.Contains(t.MismatchLabelKeys, k) {
			errs = append(errs, field.Invalid(p.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, ValidateLabelName(t.TopologyKey, p.Child("topologyKey"))...)
}

func validateLabelKeys(keys []string, sel *api.LabelSelector, p *field.Path) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if sel == nil {
		return field.ErrorList{field.Forbidden(p, "must not be specified when labelSelector is not set")}
	}
	var errs field.ErrorList
	for i, k := range keys {
		errs = append(errs, ValidateLabelName(k, p.Index(i))...)
	}
	return errs
}

// ValidateNodeSelector checks a required node selector: at least one term,
// each requirement well formed.
func ValidateNodeSelector(ns *api.NodeSelector, allowInvalidValues bool, p *field.Path) field.ErrorList {
	tp := p.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range ns.NodeSelectorTerms {
		errs = append(errs, validateNodeSelectorTerm(t, allowInvalidValues, tp.Index(i))...)
	}
	return errs
}

func validateNodeSelectorTerm(t api.NodeSelectorTerm, allowInvalidValues bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		errs = append(errs, validateNodeSelectorRequirement(r, allowInvalidValues, p.Child("matchExpressions").Index(i))...)
	}
	for i, r := range t.MatchFields {
		rp := p.Child("matchFields").Index(i)
		switch r.Operator {
		case api.NodeSelectorOpIn, api.NodeSelectorOpNotIn:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), string(r.Operator), "not a valid selector operator"))
		}
		if r.Key != "metadata.name" {
			errs = append(errs, field.Invalid(rp.Child("key"), r.Key, "not a valid field selector key"))
			continue
		}
		for j, v := range r.Values {
			for _, msg := range naming.NameIsDNSSubdomain(v, false) {
				errs = append(errs, field.Invalid(rp.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}

func validateNodeSelectorRequirement(r api.NodeSelectorRequirement, allowInvalidValues bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case api.NodeSelectorOpIn, api.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case api.NodeSelectorOpExists, api.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case api.NodeSelectorOpGt, api.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), string(r.Operator), "not a valid selector operator"))
	}
	errs = append(errs, ValidateLabelName(r.Key, p.Child("key"))...)
	if !allowInvalidValues {
		for i, v := range r.Values {
			for _, msg := range naming.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(i), v, msg))
			}
		}
	}
	return errs
}

func validateTopologySpreadConstraints(cs []api.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		cp := p.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "can not be empty"))
		}
		if c.WhenUnsatisfiable != api.DoNotSchedule && c.WhenUnsatisfiable != api.ScheduleAnyway {
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), string(c.WhenUnsatisfiable), []string{"DoNotSchedule", "ScheduleAnyway"}))
		}
		for _, rest := range cs[i+1:] {
			if rest.TopologyKey == c.TopologyKey && rest.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(cp.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if md := c.MinDomains; md != nil {
			if *md <= 0 {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), *md, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != api.DoNotSchedule {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), *md,
					fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", api.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, pol := range []struct {
			v    *api.NodeInclusionPolicy
			name string
		}{{c.NodeAffinityPolicy, "nodeAffinityPolicy"}, {c.NodeTaintsPolicy, "nodeTaintsPolicy"}} {
			if pol.v != nil && *pol.v != api.NodeInclusionPolicyHonor && *pol.v != api.NodeInclusionPolicyIgnore {
				errs = append(errs, field.NotSupported(cp.Child(pol.name), string(*pol.v), []string{"Honor", "Ignore"}))
			}
		}
		if len(c.MatchLabelKeys) > 0 {
			mp := cp.Child("matchLabelKeys")
			if c.LabelSelector == nil {
				errs = append(errs, field.Forbidden(mp, "must not be specified when labelSelector is not set"))
			}
			for j, k := range c.MatchLabelKeys {
				errs = append(errs, ValidateLabelName(k, mp.Index(j))...)
				if c.LabelSelector != nil && selectorHasKey(c.LabelSelector, k) {
					errs = append(errs, field.Invalid(mp.Index(j), k, "exists in both matchLabelKeys and labelSelector"))
				}
			}
		}
		errs = append(errs, ValidateLabelSelector(c.LabelSelector, LabelSelectorOptions{}, cp.Child("labelSelector"))...)
	}
	return errs
}

func selectorHasKey(s *api.LabelSelector, key string) bool {
	if _, ok := s.MatchLabels[key]; ok {
		return true
	}
	for _, e := range s.MatchExpressions {
		if e.Key == key {
			return true
		}
	}
	return false
}
