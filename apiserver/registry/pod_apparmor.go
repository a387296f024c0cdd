package registry

import (
	"context"
	"fmt"
	"reflect"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// syncAppArmorAnnotations is kube-apiserver's applyAppArmorVersionSkew on
// pod create: a container with a deprecated AppArmor annotation and no
// appArmorProfile gets the field the annotation means (unless the pod's
// profile already says it), with kube's deprecation warning; an annotation
// that means no valid profile is only warned about. Windows pods are left
// alone.
func syncAppArmorAnnotations(ctx context.Context, pod *api.Pod) {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == "windows" {
		return
	}
	var podProfile *api.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	sync := func(c *api.Container) {
		key := api.DeprecatedAppArmorAnnotationKeyPrefix + c.Name
		annotation, ok := pod.Annotations[key]
		if !ok || c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			return
		}
		profile := api.AppArmorFieldForAnnotation(annotation)
		if len(validation.ValidateAppArmorProfile(profile, field.NewPath(""))) > 0 {
			profile = nil
		}
		warn := profile == nil
		if profile != nil && !reflect.DeepEqual(profile, podProfile) {
			if c.SecurityContext == nil {
				c.SecurityContext = &api.SecurityContext{}
			}
			c.SecurityContext.AppArmorProfile = profile
			warn = true
		}
		if warn {
			warning.Add(ctx, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`,
				field.NewPath("metadata", "annotations").Key(key)))
		}
	}
	for i := range pod.Spec.InitContainers {
		sync(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		sync(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		sync(&pod.Spec.EphemeralContainers[i].Container)
	}
}
