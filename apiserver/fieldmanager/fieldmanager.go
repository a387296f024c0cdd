package fieldmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// Manager holds the type converter built from the published schemas; it is
// made once at startup and shared by every kind.
type Manager struct {
	tc managedfields.TypeConverter
}

// New builds the type converter from OpenAPI v3 schemas keyed by
// definition name (openapi.Docs.Schemas). Every kind apply must serve needs
// its x-kubernetes-group-version-kind there.
func New(schemas []byte) (*Manager, error) {
	defs := map[string]*spec.Schema{}
	if err := json.Unmarshal(schemas, &defs); err != nil {
		return nil, fmt.Errorf("decode openapi schemas: %w", err)
	}
	return FromDefinitions(defs, false)
}

// FromDefinitions builds the type converter from OpenAPI v3 definitions
// (a custom resource's, from its CRD's schema); preserveUnknownFields
// makes every object keep fields its schema does not name, as a CRD with
// spec.preserveUnknownFields does.
func FromDefinitions(defs map[string]*spec.Schema, preserveUnknownFields bool) (*Manager, error) {
	tc, err := managedfields.NewTypeConverter(defs, preserveUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("build type converter: %w", err)
	}
	return &Manager{tc: tc}, nil
}

// For returns the field manager of one kind. A kind that has a status
// subresource has its status reset on writes to the object and its spec
// on writes to /status, as in Kubernetes' strategies (GetResetFields): a
// manager does not come to own fields its write could not change.
func (m *Manager) For(info api.ResourceInfo) *Kind {
	gv := schema.GroupVersion{Group: info.Group, Version: info.Version}
	return &Kind{tc: m.tc, gvk: gv.WithKind(info.Kind), newObj: info.New,
		hasStatus: info.HasSubresource("status")}
}

// TypeConverter is the kind's schema as structured-merge-diff types it
// (for a built-in kind, every built-in kind's), which mutating admission
// policies' apply configurations are merged with.
func (k *Kind) TypeConverter() managedfields.TypeConverter { return k.tc }

// Kind is the field manager of one kind, for all its subresources.
type Kind struct {
	tc        managedfields.TypeConverter
	gvk       schema.GroupVersionKind
	newObj    func() api.Object
	hasStatus bool
	// bySub caches one library FieldManager per subresource ("" for the
	// object itself): managers are named after the subresource they write.
	bySub sync.Map // string -> *managedfields.FieldManager
}

func (k *Kind) fieldManager(subresource string) (*managedfields.FieldManager, error) {
	if fm, ok := k.bySub.Load(subresource); ok {
		return fm.(*managedfields.FieldManager), nil
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if k.hasStatus {
		var p fieldpath.Path
		switch subresource {
		case "":
			p = fieldpath.MakePathOrDie("status")
		case "status":
			p = fieldpath.MakePathOrDie("spec")
		}
		if p != nil {
			reset = map[fieldpath.APIVersion]fieldpath.Filter{
				fieldpath.APIVersion(k.gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(p)),
			}
		}
	}
	gv := k.gvk.GroupVersion()
	fm, err := managedfields.NewDefaultFieldManager(k.tc, converter{gv}, defaulter{}, creater{}, k.gvk, gv, subresource, reset)
	if err != nil {
		return nil, err
	}
	got, _ := k.bySub.LoadOrStore(subresource, fm)
	return got.(*managedfields.FieldManager), nil
}

// Update records in obj's managedFields what manager changed from live to
// obj (live nil: a create), as an Update operation through subresource.
// managedFields obj carries are kept or reset by Kubernetes' rules: a
// non-empty list replaces the recorded one, an empty list (or one empty
// entry) clears it, none keeps live's. It does not fail: when the library
// does, obj keeps live's managedFields, as kube-apiserver's UpdateNoErrors.
func (k *Kind) Update(live, obj api.Object, manager, subresource string) {
	fm, err := k.fieldManager(subresource)
	if err != nil {
		return
	}
	var liveO runtime.Object
	if live == nil {
		if liveO, err = zeroObject(k.newObj, k.gvk); err != nil {
			return
		}
	} else if liveO, err = toObject(live); err != nil {
		return
	}
	newO, err := toObject(obj)
	if err != nil {
		return
	}
	out := fm.UpdateNoErrors(liveO, newO, manager)
	acc, err := meta.Accessor(out)
	if err != nil {
		return
	}
	obj.GetObjectMeta().ManagedFields = fromMeta(acc.GetManagedFields())
}

// Apply merges an apply configuration (YAML or JSON) into live (nil: the
// object does not exist yet) on behalf of manager, and returns the object
// to store with its managedFields. Errors are Statuses with Kubernetes'
// codes and messages: 400 for a body that does not decode or names
// another kind or version, 409 Conflict with a FieldManagerConflict cause
// per field another manager owns (unless force), and 500 for a
// configuration the schema does not describe, as kube-apiserver answers.
func (k *Kind) Apply(live api.Object, patch []byte, manager, subresource string, force bool) (api.Object, error) {
	patchU, err := decodeApply(patch)
	if err != nil {
		return nil, err
	}
	fm, err := k.fieldManager(subresource)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var liveO runtime.Object
	if live == nil {
		liveO = k.empty()
	} else if liveO, err = toObject(live); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, err := fm.Apply(liveO, patchU, manager, force)
	if err != nil {
		return nil, statusOf(err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj := k.newObj()
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the applied configuration produced an object that cannot be decoded: %v", err))
	}
	return obj, nil
}

// decodeApply decodes an apply configuration as kube-apiserver does
// (sigs.k8s.io/yaml into unstructured content); a body that does not
// decode is 400 "error decoding patch: ...".
func decodeApply(patch []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(patch, &u.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	return u, nil
}

// empty is the live object of a create: nothing but its type.
func (k *Kind) empty() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(k.gvk)
	return u
}

// object is the library's view of an api.Object: its JSON as unstructured
// content (whole numbers as int64) without managedFields, which are kept
// beside it in the library's type, so that reading and writing them (the
// library does both on every write) converts nothing. The converter hands
// the library the plain content to type.
type object struct {
	*unstructured.Unstructured
	managed []metav1.ManagedFieldsEntry
}

func (o *object) GetManagedFields() []metav1.ManagedFieldsEntry  { return o.managed }
func (o *object) SetManagedFields(m []metav1.ManagedFieldsEntry) { o.managed = m }

// toObject is the seam. An empty, non-nil managedFields list survives,
// since it asks for a reset.
func toObject(obj api.Object) (*object, error) {
	meta := obj.GetObjectMeta()
	mf := meta.ManagedFields
	meta.ManagedFields = nil
	data, err := json.Marshal(obj)
	meta.ManagedFields = mf
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return &object{Unstructured: u, managed: toMeta(mf)}, nil
}

// toMeta converts api entries to the library's; FieldsV1 bytes are shared
// (the library only reads them).
func toMeta(in []api.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	if in == nil {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, len(in))
	for i, e := range in {
		o := metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: metav1.ManagedFieldsOperationType(e.Operation),
			APIVersion: e.APIVersion, FieldsType: e.FieldsType, Subresource: e.Subresource}
		if e.Time != nil {
			o.Time = &metav1.Time{Time: e.Time.Time}
		}
		if e.FieldsV1 != nil {
			o.FieldsV1 = &metav1.FieldsV1{Raw: e.FieldsV1.Raw}
		}
		out[i] = o
	}
	return out
}

// fromMeta converts the library's entries to the api type; FieldsV1 bytes
// are copied, as the library may share them with the live object's.
func fromMeta(in []metav1.ManagedFieldsEntry) []api.ManagedFieldsEntry {
	if len(in) == 0 {
		return nil
	}
	out := make([]api.ManagedFieldsEntry, len(in))
	for i, e := range in {
		o := api.ManagedFieldsEntry{Manager: e.Manager, Operation: api.ManagedFieldsOperationType(e.Operation),
			APIVersion: e.APIVersion, FieldsType: e.FieldsType, Subresource: e.Subresource}
		if e.Time != nil {
			t := api.NewTime(e.Time.Time)
			o.Time = &t
		}
		if e.FieldsV1 != nil {
			o.FieldsV1 = &api.FieldsV1{Raw: bytes.Clone(e.FieldsV1.Raw)}
		}
		out[i] = o
	}
	return out
}

// statusOf turns the library's errors into api Statuses: its StatusErrors
// keep code, reason, message and causes as they are; other errors are what
// kube-apiserver makes of an error that is not a Status: 500 with the
// error's text and no reason.
func statusOf(err error) error {
	var se *kerrors.StatusError
	if errors.As(err, &se) {
		data, jerr := json.Marshal(se.ErrStatus)
		var st api.Status
		if jerr == nil && json.Unmarshal(data, &st) == nil {
			return apierrors.FromStatus(st)
		}
	}
	return apierrors.FromStatus(api.Status{Status: api.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()})
}

// converter is the object converter of a kind served at one version:
// objects are already in it.
type converter struct{ gv schema.GroupVersion }

func (c converter) Convert(in, out, context any) error {
	return fmt.Errorf("conversion is not supported")
}

func (c converter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if o, ok := in.(*object); ok {
		in = o.Unstructured
	}
	kind := in.GetObjectKind().GroupVersionKind()
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{kind})
	if ok && target.GroupVersion() == kind.GroupVersion() {
		return in, nil
	}
	if conv := crossVersion[[2]string{kind.GroupVersion().String(), target.GroupVersion().String()}]; ok && conv != nil {
		// Managed fields written at another version of the kind are
		// compared with the object at that version, as kube converts.
		return convertUnstructured(in, kind, conv)
	}
	return nil, fmt.Errorf("%v is not served at %v", kind, gv)
}

// crossVersion are the conversions between the versions of a kind served
// at several over one storage, by [from, to] group-version.
var crossVersion = map[[2]string]func(api.Object) api.Object{
	{"autoscaling/v2", "autoscaling/v1"}: func(o api.Object) api.Object { return api.HPAToV1(o.(*api.HorizontalPodAutoscaler)) },
	{"autoscaling/v1", "autoscaling/v2"}: func(o api.Object) api.Object { return api.HPAFromV1(o.(*api.HorizontalPodAutoscalerV1)) },
}

func convertUnstructured(in runtime.Object, kind schema.GroupVersionKind, conv func(api.Object) api.Object) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	info, found := api.LookupKind(kind.GroupVersion().String(), kind.Kind)
	if !ok || !found {
		return nil, fmt.Errorf("cannot convert %v", kind)
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	obj := info.New()
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, err
	}
	if data, err = json.Marshal(conv(obj)); err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return out, nil
}

func (c converter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// defaulter leaves defaulting to the registry's strategies, which run on
// the applied object like on any other write.
type defaulter struct{}

func (defaulter) Default(runtime.Object) {}

// creater makes the empty unstructured objects the library starts from.
type creater struct{}

func (creater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(kind)
	return u, nil
}
