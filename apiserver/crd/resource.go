package crd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kfield "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// libStrategy is what this package uses of kube's custom resource
// strategy (customresource.NewStrategy and NewStatusStrategy).
type libStrategy interface {
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	Validate(ctx context.Context, obj runtime.Object) kfield.ErrorList
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) kfield.ErrorList
}

type attrsGetter interface {
	GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error)
}

// resourceStrategy serves one version of a custom resource: pruning and
// defaulting by its structural schema, then kube's custom resource
// strategy (status, generation, metadata, OpenAPI schema and CEL
// validation, selectable fields).
type resourceStrategy struct {
	registry.BaseStrategy
	structural      *structuralschema.Structural
	preserveUnknown bool
	lib             libStrategy
	status          libStrategy
	attrs           attrsGetter
	selectable      []string
	// selectableMeta says whether a selectable field lies in metadata,
	// which Fields then converts whole.
	selectableMeta bool
	// scale is the version's scale subresource, nil without one.
	scale *apiextensions.CustomResourceSubresourceScale
	// hasDefaults says whether the schema sets any default.
	hasDefaults bool
}

var (
	_ registry.Strategy           = (*resourceStrategy)(nil)
	_ registry.StatusStrategy     = (*resourceStrategy)(nil)
	_ registry.Scaler             = (*resourceStrategy)(nil)
	_ registry.UnknownFieldFinder = (*resourceStrategy)(nil)
	_ registry.ReadNormalizer     = (*resourceStrategy)(nil)
)

// newResourceStrategy builds the strategy of version of crd (v1, defaulted).
func newResourceStrategy(crd *apiextensionsv1.CustomResourceDefinition, version string) (*resourceStrategy, error) {
	var v *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			v = &crd.Spec.Versions[i]
		}
	}
	if v == nil {
		return nil, fmt.Errorf("version %s is not defined", version)
	}
	var props *apiextensions.JSONSchemaProps
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("convert the schema of %s: %w", version, err)
		}
		props = internal.OpenAPIV3Schema
	}
	s := &resourceStrategy{preserveUnknown: crd.Spec.PreserveUnknownFields}
	if props != nil {
		st, err := structuralschema.NewStructural(props)
		if err != nil && !crd.Spec.PreserveUnknownFields {
			return nil, fmt.Errorf("the schema of %s is not structural: %w", version, err)
		}
		if st != nil {
			st = st.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(st); err != nil {
				return nil, fmt.Errorf("prune the defaults of %s: %w", version, err)
			}
		}
		s.structural = st
		s.hasDefaults = hasDefaults(st)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, fmt.Errorf("schema validator of %s: %w", version, err)
	}
	var statusSpec *apiextensions.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	var scaleSpec *apiextensions.CustomResourceSubresourceScale
	if sub := v.Subresources; sub != nil {
		if sub.Status != nil {
			statusSpec = &apiextensions.CustomResourceSubresourceStatus{}
			if props != nil {
				if ss, ok := props.Properties["status"]; ok {
					if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&ss); err != nil {
						return nil, fmt.Errorf("status schema validator of %s: %w", version, err)
					}
				}
			}
		}
		if sub.Scale != nil {
			scaleSpec = &apiextensions.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, scaleSpec, nil); err != nil {
				return nil, fmt.Errorf("convert the scale subresource of %s: %w", version, err)
			}
		}
	}
	kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Status.AcceptedNames.Kind}
	lib := customresource.NewStrategy(unstructuredTyper{}, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, kind,
		validator, statusValidator, s.structural, statusSpec, scaleSpec, v.SelectableFields)
	s.lib, s.attrs, s.scale = lib, lib, scaleSpec
	s.status = customresource.NewStatusStrategy(lib)
	for _, f := range v.SelectableFields {
		p := f.JSONPath[1:]
		s.selectable = append(s.selectable, p)
		s.selectableMeta = s.selectableMeta || p == "metadata" || strings.HasPrefix(p, "metadata.") || strings.HasPrefix(p, "metadata[")
	}
	return s, nil
}

// unstructuredTyper types unstructured objects by their own apiVersion
// and kind, which is all the strategy asks of its typer.
type unstructuredTyper struct{}

func (unstructuredTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return []schema.GroupVersionKind{obj.GetObjectKind().GroupVersionKind()}, false, nil
}

func (unstructuredTyper) Recognizes(schema.GroupVersionKind) bool { return true }

// toUnstructured and fromUnstructured move a custom object to and from
// the library's representation.
func toUnstructured(obj api.Object) *unstructured.Unstructured {
	m, err := obj.(*api.CustomObject).Object()
	if err != nil {
		m = map[string]any{}
	}
	return &unstructured.Unstructured{Object: m}
}

// selectableContent is obj in unstructured form for reading selectable
// fields outside metadata: its metadata has only the name and namespace
// (the library's field set names them), which spares converting the rest.
func selectableContent(obj api.Object) *unstructured.Unstructured {
	o := obj.(*api.CustomObject)
	m := make(map[string]any, len(o.Content)+4)
	for k, v := range o.Content {
		m[k] = v
	}
	m["apiVersion"], m["kind"] = o.APIVersion, o.Kind
	m["metadata"] = map[string]any{"name": o.Name, "namespace": o.Namespace}
	if o.Status != nil {
		m["status"] = o.Status
	}
	return &unstructured.Unstructured{Object: m}
}

func fromUnstructured(u *unstructured.Unstructured, obj api.Object) {
	o := obj.(*api.CustomObject)
	keep := *o
	if err := o.SetObject(u.Object); err != nil {
		*o = keep
	}
}

// pruneAndDefault drops the fields the schema does not know (unless it
// preserves them) and sets its defaults, as kube-apiserver does when it
// decodes a custom resource.
func (s *resourceStrategy) pruneAndDefault(u *unstructured.Unstructured) {
	if s.structural == nil {
		return
	}
	if !s.preserveUnknown {
		structuralpruning.PruneWithOptions(u.Object, s.structural, true, structuralschema.UnknownFieldPathOptions{})
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s.structural)
	}
	structuraldefaulting.Default(u.Object, s.structural)
}

// UnknownFields returns the paths of the fields of obj, a custom object
// as a request sent it, that kube-apiserver's decoder would report as
// unknown, in its order: the root metadata's unknown fields, then those
// the schema does not declare (unless it preserves them; sorted, where
// kube follows Go's map order), then the unknown metadata fields of
// embedded resources. obj is not changed.
func (s *resourceStrategy) UnknownFields(obj map[string]any) []string {
	u := runtime.DeepCopyJSON(obj)
	_, _, paths, err := schemaobjectmeta.GetObjectMetaWithOptions(u, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields: true, ReturnUnknownFieldPaths: true})
	if err != nil || s.structural == nil {
		return paths
	}
	if !s.preserveUnknown {
		pruned := structuralpruning.PruneWithOptions(u, s.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		slices.Sort(pruned)
		paths = append(paths, pruned...)
	}
	if ferr, embedded := schemaobjectmeta.CoerceWithOptions(nil, u, s.structural, false,
		schemaobjectmeta.CoerceOptions{DropInvalidFields: true, ReturnUnknownFieldPaths: true}); ferr == nil {
		paths = append(paths, embedded...)
	}
	return paths
}

// NormalizeRead prunes and defaults a stored object by the current
// schema, as kube-apiserver does when it reads from etcd (a default added
// to the schema later shows on the objects written before).
func (s *resourceStrategy) NormalizeRead(obj api.Object) bool {
	if s.structural == nil || (s.preserveUnknown && !s.hasDefaults) {
		return false
	}
	u := toUnstructured(obj)
	changed := false
	if !s.preserveUnknown {
		changed = len(structuralpruning.PruneWithOptions(u.Object, s.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})) > 0
	}
	if s.hasDefaults {
		before := presentValues(u.Object)
		structuraldefaulting.Default(u.Object, s.structural)
		changed = changed || presentValues(u.Object) != before
	}
	if changed {
		fromUnstructured(u, obj)
	}
	return changed
}

// presentValues counts the keys and the non-null values in an
// unstructured value. Defaulting only adds a missing key or replaces a
// null with a default, so it changed an object exactly when the count
// grew; counting spares a deep copy and comparison of every object read.
func presentValues(v any) int {
	switch t := v.(type) {
	case nil:
		return 0
	case map[string]any:
		n := 1 + len(t)
		for _, e := range t {
			n += presentValues(e)
		}
		return n
	case []any:
		n := 1
		for _, e := range t {
			n += presentValues(e)
		}
		return n
	}
	return 1
}

// hasDefaults reports whether a schema sets a default anywhere.
func hasDefaults(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Default.Object != nil || hasDefaults(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasDefaults(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(&p) {
			return true
		}
	}
	return false
}

// DefaultCreate prunes and defaults the new object.
func (s *resourceStrategy) DefaultCreate(obj api.Object) {
	u := toUnstructured(obj)
	s.pruneAndDefault(u)
	fromUnstructured(u, obj)
}

// DefaultUpdate prunes and defaults the replacement.
func (s *resourceStrategy) DefaultUpdate(obj, old api.Object) { s.DefaultCreate(obj) }

// PrepareForCreate drops the status when /status serves it.
func (s *resourceStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	u := toUnstructured(obj)
	s.lib.PrepareForCreate(ctx, u)
	fromUnstructured(u, obj)
}

// PrepareForUpdate keeps the stored status when /status serves it, and
// sets the generation.
func (s *resourceStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	u := toUnstructured(obj)
	s.lib.PrepareForUpdate(ctx, u, toUnstructured(old))
	fromUnstructured(u, obj)
}

// Validate is kube's validation of a new custom object.
func (s *resourceStrategy) Validate(ctx context.Context, obj api.Object) field.ErrorList {
	return fieldErrors(s.lib.Validate(ctx, toUnstructured(obj)))
}

// ValidateUpdate is kube's validation of a replacement (CEL transition
// rules and ratcheting included).
func (s *resourceStrategy) ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return fieldErrors(s.lib.ValidateUpdate(ctx, toUnstructured(obj), toUnstructured(old)))
}

// PrepareForStatusUpdate prunes and defaults the new status; the store
// keeps everything else of the stored object.
func (s *resourceStrategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {
	u := toUnstructured(obj)
	s.pruneAndDefault(u)
	s.status.PrepareForUpdate(ctx, u, toUnstructured(old))
	fromUnstructured(u, obj)
}

// ValidateStatusUpdate is kube's validation of a status write.
func (s *resourceStrategy) ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return fieldErrors(s.status.ValidateUpdate(ctx, toUnstructured(obj), toUnstructured(old)))
}

// AllowCreateOnUpdate: a custom object is created by POST only, as in kube.
func (s *resourceStrategy) AllowCreateOnUpdate() bool { return false }

// AllowUnconditionalUpdate: a PUT must carry a resourceVersion, as in kube.
func (s *resourceStrategy) AllowUnconditionalUpdate() bool { return false }

// Fields returns the version's selectableFields.
func (s *resourceStrategy) Fields(obj api.Object) map[string]string {
	if len(s.selectable) == 0 {
		return nil
	}
	u := selectableContent(obj)
	if s.selectableMeta {
		u = toUnstructured(obj)
	}
	_, fs, err := s.attrs.GetAttrs(u)
	if err != nil {
		return nil
	}
	out := make(map[string]string, len(s.selectable))
	for _, f := range s.selectable {
		out[f] = fs[f]
	}
	return out
}

// Scale reads the replicas and selector at the scale subresource's paths;
// a missing number is 0, as in kube.
func (s *resourceStrategy) Scale(obj api.Object) (spec, status int32, selector string, err error) {
	if s.scale == nil {
		return 0, 0, "", apierrors.NewNotFound(apierrors.GroupResource{}, "scale")
	}
	u := toUnstructured(obj).Object
	specN, _, err := unstructured.NestedInt64(u, jsonPathFields(s.scale.SpecReplicasPath)...)
	if err != nil {
		return 0, 0, "", apierrors.NewInternalError(err)
	}
	statusN, _, err := unstructured.NestedInt64(u, jsonPathFields(s.scale.StatusReplicasPath)...)
	if err != nil {
		return 0, 0, "", apierrors.NewInternalError(err)
	}
	if p := s.scale.LabelSelectorPath; p != nil && *p != "" {
		if selector, _, err = unstructured.NestedString(u, jsonPathFields(*p)...); err != nil {
			return 0, 0, "", apierrors.NewInternalError(err)
		}
	}
	return int32(specN), int32(statusN), selector, nil
}

// SetReplicas sets the desired replicas at specReplicasPath.
func (s *resourceStrategy) SetReplicas(obj api.Object, n int32) error {
	if s.scale == nil {
		return apierrors.NewNotFound(apierrors.GroupResource{}, "scale")
	}
	u := toUnstructured(obj)
	if err := unstructured.SetNestedField(u.Object, int64(n), jsonPathFields(s.scale.SpecReplicasPath)...); err != nil {
		return apierrors.NewInternalError(err)
	}
	fromUnstructured(u, obj)
	return nil
}

// jsonPathFields splits a simple JSON path (".spec.replicas"), the only
// kind CRD validation allows for scale paths.
func jsonPathFields(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }
