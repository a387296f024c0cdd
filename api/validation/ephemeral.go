package validation

import (
	"fmt"
	"reflect"
	"unicode"
	"unicode/utf8"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

// allowedEphemeralContainerFields are the Container fields an ephemeral
// container may set (Kubernetes' allow list: no ports, probes, lifecycle,
// resources, restart policy).
var allowedEphemeralContainerFields = map[string]bool{
	"Name": true, "Image": true, "Command": true, "Args": true, "WorkingDir": true, "EnvFrom": true, "Env": true,
	"VolumeMounts": true, "VolumeDevices": true, "TerminationMessagePath": true, "TerminationMessagePolicy": true,
	"ImagePullPolicy": true, "SecurityContext": true, "Stdin": true, "StdinOnce": true, "TTY": true,
}

// validateEphemeralContainers checks spec.ephemeralContainers as
// Kubernetes does: each a valid container, its name unique across every
// container of the pod, its target an existing (non-ephemeral) container,
// and only the allowed fields set.
func validateEphemeralContainers(spec *api.PodSpec, vols map[string]*api.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	other, all := map[string]bool{}, map[string]bool{}
	for _, cs := range [][]api.Container{spec.Containers, spec.InitContainers} {
		for _, c := range cs {
			other[c.Name], all[c.Name] = true, true
		}
	}
	for i := range spec.EphemeralContainers {
		ec := &spec.EphemeralContainers[i]
		ip := p.Index(i)
		errs = append(errs, validateContainerCommon(&ec.Container, vols, spec.RestartPolicy, ip)...)
		if all[ec.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), ec.Name))
		} else {
			all[ec.Name] = true
		}
		if ec.TargetContainerName != "" && !other[ec.TargetContainerName] {
			errs = append(errs, field.NotFound(ip.Child("targetContainerName"), ec.TargetContainerName))
		}
		t, v := reflect.TypeOf(ec.Container), reflect.ValueOf(ec.Container)
		for f := 0; f < t.NumField(); f++ {
			name := t.Field(f).Name
			if allowedEphemeralContainerFields[name] || v.Field(f).IsZero() {
				continue
			}
			r, n := utf8.DecodeRuneInString(name)
			errs = append(errs, field.Forbidden(ip.Child(string(unicode.ToLower(r))+name[n:]), "cannot be set for an Ephemeral Container"))
		}
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// ValidatePodEphemeralContainersUpdate checks a write of
// pods/NAME/ephemeralcontainers: the new list is valid and keeps every
// existing ephemeral container unchanged (they may not be removed or
// changed once added).
func ValidatePodEphemeralContainersUpdate(pod, old *api.Pod) field.ErrorList {
	specPath := field.NewPath("spec").Child("ephemeralContainers")
	vols, errs := validateVolumes(pod.Spec.Volumes, field.NewPath("spec", "volumes"))
	errs = append(errs[:0:0], validateEphemeralContainers(&pod.Spec, vols, specPath)...)
	if _, ok := old.Annotations[api.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := map[string]*api.EphemeralContainer{}
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !reflect.DeepEqual(o, *n):
			errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n", o.Name)))
		}
	}
	return errs
}
