package validation

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// Messages shared by many rules, worded as in Kubernetes.
const (
	fieldImmutableErrorMsg = "field is immutable"
	isNegativeErrorMsg     = naming.IsNegativeErrorMsg
	isNotPositiveErrorMsg  = "must be greater than zero"
	isNotIntegerErrorMsg   = "must be an integer"
	fileModeErrorMsg       = "must be a number between 0 and 0777 (octal), both inclusive"
)

// TotalAnnotationSizeLimitB bounds the summed size of annotation keys and values.
const TotalAnnotationSizeLimitB = 256 * (1 << 10)

// NameFunc validates an object name; with prefix set it validates a
// generateName prefix. The naming package provides the usual ones.
type NameFunc = naming.ValidateNameFunc

// goValue makes a bad value print in Go syntax (map[string]string{"a":"b"}),
// as Kubernetes prints maps and structs in its messages.
type goValue struct{ v any }

func (g goValue) String() string { return fmt.Sprintf("%#v", g.v) }

// ValidateObjectMeta checks the metadata of an object being created: name
// (or generateName) by nameFn, namespace required for namespaced kinds and
// forbidden otherwise, generation, labels, annotations, owner references,
// finalizers.
func ValidateObjectMeta(meta *api.ObjectMeta, namespaced bool, nameFn NameFunc, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if meta.GenerateName != "" {
		for _, msg := range nameFn(meta.GenerateName, true) {
			errs = append(errs, field.Invalid(path.Child("generateName"), meta.GenerateName, msg))
		}
	}
	if meta.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "name or generateName is required"))
	} else {
		for _, msg := range nameFn(meta.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), meta.Name, msg))
		}
	}
	if namespaced {
		if meta.Namespace == "" {
			errs = append(errs, field.Required(path.Child("namespace"), ""))
		} else {
			for _, msg := range naming.ValidateNamespaceName(meta.Namespace, false) {
				errs = append(errs, field.Invalid(path.Child("namespace"), meta.Namespace, msg))
			}
		}
	} else if meta.Namespace != "" {
		errs = append(errs, field.Forbidden(path.Child("namespace"), "not allowed on this type"))
	}
	errs = append(errs, validateMetaCommon(meta, path)...)
	errs = append(errs, ValidateFinalizers(meta.Finalizers, path.Child("finalizers"))...)
	return errs
}

func validateMetaCommon(meta *api.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateNonnegative(meta.Generation, path.Child("generation"))...)
	errs = append(errs, ValidateLabels(meta.Labels, path.Child("labels"))...)
	errs = append(errs, ValidateAnnotations(meta.Annotations, path.Child("annotations"))...)
	errs = append(errs, ValidateOwnerReferences(meta.OwnerReferences, path.Child("ownerReferences"))...)
	return errs
}

// ValidateObjectMetaUpdate checks metadata on update: name, namespace, uid,
// creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds are
// immutable, resourceVersion is required, generation may not go down, and
// no finalizer may be added once deletion has started.
func ValidateObjectMetaUpdate(meta, old *api.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old.DeletionTimestamp != nil {
		var added []string
		for _, f := range meta.Finalizers {
			if !slices.Contains(old.Finalizers, f) && !slices.Contains(added, f) {
				added = append(added, f)
			}
		}
		if len(added) > 0 {
			sort.Strings(added)
			errs = append(errs, field.Forbidden(path.Child("finalizers"),
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added)))
		}
	}
	if meta.ResourceVersion == "" {
		errs = append(errs, field.Invalid(path.Child("resourceVersion"), meta.ResourceVersion, "must be specified for an update"))
	}
	errs = append(errs, validateNonnegative(meta.Generation, path.Child("generation"))...)
	if meta.Generation < old.Generation {
		errs = append(errs, field.Invalid(path.Child("generation"), meta.Generation, "must not be decremented"))
	}
	errs = append(errs, validateImmutable(meta.Name, old.Name, path.Child("name"))...)
	errs = append(errs, validateImmutable(meta.Namespace, old.Namespace, path.Child("namespace"))...)
	errs = append(errs, validateImmutable(string(meta.UID), string(old.UID), path.Child("uid"))...)
	if !meta.CreationTimestamp.Equal(old.CreationTimestamp.Time) {
		errs = append(errs, field.Invalid(path.Child("creationTimestamp"), meta.CreationTimestamp.String(), fieldImmutableErrorMsg))
	}
	if !timePtrEqual(meta.DeletionTimestamp, old.DeletionTimestamp) {
		errs = append(errs, field.Invalid(path.Child("deletionTimestamp"), timePtrString(meta.DeletionTimestamp), fieldImmutableErrorMsg))
	}
	if !reflect.DeepEqual(meta.DeletionGracePeriodSeconds, old.DeletionGracePeriodSeconds) {
		errs = append(errs, field.Invalid(path.Child("deletionGracePeriodSeconds"), meta.DeletionGracePeriodSeconds, fieldImmutableErrorMsg))
	}
	errs = append(errs, ValidateLabels(meta.Labels, path.Child("labels"))...)
	errs = append(errs, ValidateAnnotations(meta.Annotations, path.Child("annotations"))...)
	errs = append(errs, ValidateOwnerReferences(meta.OwnerReferences, path.Child("ownerReferences"))...)
	for i, f := range meta.Finalizers {
		errs = append(errs, validateKubeFinalizerName(f, path.Child("finalizers").Index(i))...)
	}
	return errs
}

func timePtrEqual(a, b *api.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b.Time)
}

func timePtrString(t *api.Time) string {
	if t == nil {
		return "null"
	}
	return t.String()
}

// ValidateLabels checks label keys (qualified names) and values.
func ValidateLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		errs = append(errs, ValidateLabelName(k, path)...)
		for _, msg := range naming.IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(path, labels[k], msg))
		}
	}
	return errs
}

// ValidateLabelName checks one label key.
func ValidateLabelName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// ValidateAnnotations checks annotation keys (qualified names, compared in
// lower case) and that keys and values together stay within 256 KiB.
func ValidateAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		for _, msg := range naming.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
		total += len(k) + len(annotations[k])
	}
	if total > TotalAnnotationSizeLimitB {
		errs = append(errs, field.TooLong(path, "", TotalAnnotationSizeLimitB))
	}
	return errs
}

// ValidateOwnerReferences checks the shape of owner references and that at
// most one of them is the controller.
func ValidateOwnerReferences(refs []api.OwnerReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	firstController := ""
	for i, ref := range refs {
		p := path.Index(i)
		switch {
		case ref.APIVersion == "":
			errs = append(errs, field.Required(p.Child("apiVersion"), "must not be empty"))
		case !validGroupVersion(ref.APIVersion):
			errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, "must be <group>/<version> or <version>"))
		}
		if ref.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), "must not be empty"))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "must not be empty"))
		}
		if ref.UID == "" {
			errs = append(errs, field.Required(p.Child("uid"), "must not be empty"))
		}
		if ref.APIVersion == "v1" && ref.Kind == "Event" {
			errs = append(errs, field.Invalid(p, goValue{ref}, "/v1, Kind=Event is disallowed from being an owner"))
		}
		if ref.Controller != nil && *ref.Controller {
			name := ref.Kind + "/" + ref.Name
			if firstController != "" {
				errs = append(errs, field.Invalid(path, goValue{refs}, fmt.Sprintf(
					"Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", firstController, name)))
			} else {
				firstController = name
			}
		}
	}
	return errs
}

// validGroupVersion accepts "v1" and "group/version", as schema.ParseGroupVersion.
func validGroupVersion(gv string) bool {
	parts := strings.Split(gv, "/")
	switch len(parts) {
	case 1:
		return parts[0] != ""
	case 2:
		return parts[1] != ""
	}
	return false
}

// standardFinalizers may appear without a domain prefix.
var standardFinalizers = []string{string(api.FinalizerKubernetes), api.FinalizerOrphanDependents, api.FinalizerDeleteDependents}

// ValidateFinalizers checks finalizer names (qualified names, standard ones
// allowed unprefixed) and that orphan and foregroundDeletion are not both set.
func ValidateFinalizers(finalizers []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range finalizers {
		for _, msg := range naming.IsQualifiedName(f) {
			errs = append(errs, field.Invalid(path, f, msg))
		}
		errs = append(errs, validateKubeFinalizerName(f, path.Index(i))...)
	}
	if slices.Contains(finalizers, api.FinalizerOrphanDependents) && slices.Contains(finalizers, api.FinalizerDeleteDependents) {
		errs = append(errs, field.Invalid(path, goValue{finalizers}, fmt.Sprintf("finalizer %s and %s cannot be both set",
			api.FinalizerOrphanDependents, api.FinalizerDeleteDependents)))
	}
	return errs
}

func validateKubeFinalizerName(f string, path *field.Path) field.ErrorList {
	if !strings.Contains(f, "/") && !slices.Contains(standardFinalizers, f) {
		return field.ErrorList{field.Invalid(path, f, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// LabelSelectorOptions relaxes label selector validation.
type LabelSelectorOptions struct {
	// AllowInvalidLabelValueInSelector skips the check of expression values.
	AllowInvalidLabelValueInSelector bool
}

// ValidateLabelSelector checks a structured label selector: its matchLabels
// and each expression's key, operator and values.
func ValidateLabelSelector(ps *api.LabelSelector, opts LabelSelectorOptions, path *field.Path) field.ErrorList {
	if ps == nil {
		return nil
	}
	errs := ValidateLabels(ps.MatchLabels, path.Child("matchLabels"))
	for i, expr := range ps.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		switch expr.Operator {
		case "In", "NotIn":
			if len(expr.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case "Exists", "DoesNotExist":
			if len(expr.Values) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), expr.Operator, "not a valid selector operator"))
		}
		errs = append(errs, ValidateLabelName(expr.Key, p.Child("key"))...)
		if !opts.AllowInvalidLabelValueInSelector {
			for j, v := range expr.Values {
				for _, msg := range naming.IsValidLabelValue(v) {
					errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
				}
			}
		}
	}
	return errs
}

func validateNonnegative(v int64, path *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(path, v, isNegativeErrorMsg)}
	}
	return nil
}

// validateImmutable reports a changed value; values are compared deeply
// and printed as Kubernetes prints them (strings quoted, structs in Go syntax).
func validateImmutable(newVal, oldVal any, path *field.Path) field.ErrorList {
	if semanticEqual(newVal, oldVal) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, printable(newVal), fieldImmutableErrorMsg)}
}

// rawText is a bad value printed as is, unquoted.
type rawText string

func (r rawText) String() string { return string(r) }

// printable prepares a value for an error message the way Kubernetes
// prints it: nil pointers as null, pointers to scalars as the scalar, and
// composite values in Go syntax.
func printable(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return rawText("null")
	}
	switch v.(type) {
	case *api.LabelSelector, map[string]string:
		return jsonValue{v}
	}
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return rawText("null")
		}
		switch rv.Elem().Kind() {
		case reflect.Map, reflect.Struct, reflect.Slice, reflect.Array:
			return goValue{v}
		}
		return rv.Elem().Interface()
	}
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return goValue{v}
	case reflect.Struct:
		if s, ok := v.(fmt.Stringer); ok {
			return rawText(s.String())
		}
		return goValue{v}
	}
	return v
}
