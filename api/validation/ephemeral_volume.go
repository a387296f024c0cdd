package validation

import (
	"encoding/json"
	"reflect"
	"unicode"
	"unicode/utf8"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

// Generic ephemeral volumes (volumes[].ephemeral), checked as kube v1.37's
// validateEphemeralVolumeSource and ValidatePersistentVolumeClaimTemplate:
// a claim template is required, its metadata may carry only labels and
// annotations, and its spec is a claim's spec.

// ephemeralVolumeSource is the pod API's raw ephemeral source decoded for
// validation (kept local: the pod type holds it as raw JSON).
type ephemeralVolumeSource struct {
	VolumeClaimTemplate *struct {
		api.ObjectMeta `json:"metadata,omitzero"`
		Spec           api.PersistentVolumeClaimSpec `json:"spec"`
	} `json:"volumeClaimTemplate,omitempty"`
}

// allowedTemplateObjectMetaFields are the only metadata fields a claim
// template may set.
var allowedTemplateObjectMetaFields = map[string]bool{"Annotations": true, "Labels": true}

func validateEphemeralVolume(src *api.VolumeSource, p *field.Path) field.ErrorList {
	ep := p.Child("ephemeral")
	var e ephemeralVolumeSource
	if err := json.Unmarshal(src.Ephemeral, &e); err != nil {
		return field.ErrorList{field.Invalid(ep, string(src.Ephemeral), err.Error())}
	}
	tp := ep.Child("volumeClaimTemplate")
	if e.VolumeClaimTemplate == nil {
		return field.ErrorList{field.Required(tp, "")}
	}
	errs := validateTemplateObjectMeta(&e.VolumeClaimTemplate.ObjectMeta, tp.Child("metadata"))
	return append(errs, validatePersistentVolumeClaimSpec(&e.VolumeClaimTemplate.Spec, tp.Child("spec"))...)
}

// validateTemplateObjectMeta is kube's ValidateTemplateObjectMeta:
// annotations, then labels, then every other set field (in ObjectMeta's
// field order) is forbidden.
func validateTemplateObjectMeta(m *api.ObjectMeta, p *field.Path) field.ErrorList {
	errs := ValidateAnnotations(m.Annotations, p.Child("annotations"))
	errs = append(errs, ValidateLabels(m.Labels, p.Child("labels"))...)
	v := reflect.ValueOf(*m)
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if allowedTemplateObjectMetaFields[name] || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(name)
		errs = append(errs, field.Forbidden(p.Child(string(unicode.ToLower(r))+name[n:]), "cannot be set"))
	}
	return errs
}
