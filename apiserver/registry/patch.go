package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
)

// PatchType is the Content-Type of a PATCH body.
type PatchType string

// The patch types Kubernetes accepts (apply-patch+cbor is behind a feature
// gate that is off by default, and not served).
const (
	JSONPatch      PatchType = "application/json-patch+json"
	MergePatch     PatchType = "application/merge-patch+json"
	StrategicPatch PatchType = "application/strategic-merge-patch+json"
	ApplyPatch     PatchType = "application/apply-patch+yaml"
)

// PatchTypes are the patch formats served, in kube-apiserver's order; a
// PATCH in any other is 415 with this list.
var PatchTypes = []string{string(JSONPatch), string(MergePatch), string(StrategicPatch), string(ApplyPatch)}

// maxApplyCreateAttempts bounds an apply that keeps finding the object
// created, then gone, between its read and its write.
const maxApplyCreateAttempts = 3

// Apply is server-side apply: the configuration is merged into the
// current object on behalf of opts.FieldManager (conflicts with other
// managers' fields are 409 unless force), or creates the object when there
// is none (created is then true). The result is stored with the rules of
// Update, or of Create; a resourceVersion in the configuration is a
// precondition.
func (s *Store) Apply(ctx context.Context, ns, name string, data []byte, force bool, opts WriteOptions) (out api.Object, created bool, err error) {
	if s.fields == nil {
		return nil, false, apierrors.NewUnsupportedMediaType(PatchTypes[:3])
	}
	opts.applied = true
	manager := opts.manager()
	checkFields := applyFieldCheck(data, opts.FieldValidation)
	for range maxApplyCreateAttempts {
		out, err = s.write(ctx, ns, name, "", opts, func(cur api.Object) (api.Object, error) {
			obj, err := s.fields.Apply(cur, data, manager, opts.Subresource, force)
			if err != nil {
				return nil, err
			}
			if checkFields != nil {
				if err := checkFields(ctx); err != nil {
					return nil, err
				}
			}
			if err := s.checkApplied(obj, ns, name); err != nil {
				return nil, err
			}
			if rv := obj.GetObjectMeta().ResourceVersion; rv != "" && rv != cur.GetObjectMeta().ResourceVersion {
				return nil, apierrors.NewConflict(s.GR, name, errors.New(apierrors.OptimisticLockErrorMsg))
			}
			return obj, nil
		})
		if !apierrors.IsNotFound(err) || opts.Subresource != "" {
			return out, false, err
		}
		obj, err := s.fields.Apply(nil, data, manager, "", force)
		if err != nil {
			return nil, false, err
		}
		if checkFields != nil {
			if err := checkFields(ctx); err != nil {
				return nil, false, err
			}
		}
		if err := s.checkApplied(obj, ns, name); err != nil {
			return nil, false, err
		}
		if obj.GetObjectMeta().UID != "" {
			return nil, false, apierrors.NewConflict(s.GR, name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", obj.GetObjectMeta().UID))
		}
		if opts.AuthorizeCreate != nil {
			if err := opts.AuthorizeCreate(ctx); err != nil {
				return nil, false, err
			}
		}
		out, err = s.Create(ctx, ns, obj, opts)
		if !apierrors.IsAlreadyExists(err) {
			return out, err == nil, err
		}
	}
	return nil, false, apierrors.NewConflict(s.GR, name, fmt.Errorf("too many concurrent writers, gave up after %d attempts", maxApplyCreateAttempts))
}

// checkApplied holds an applied object to its URL, as kube-apiserver
// checks a patched one: same name, and a namespace, if any, the request's.
func (s *Store) checkApplied(obj api.Object, ns, name string) error {
	meta := obj.GetObjectMeta()
	if s.Info.Namespaced && meta.Namespace != "" && ns != "" && meta.Namespace != ns {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if meta.Name != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", meta.Name, name))
	}
	return nil
}

// Patch applies a patch to the current object and stores the result with the
// rules of Update. A resourceVersion set by the patch is a precondition;
// otherwise a lost race re-reads and re-applies the patch to the newer object.
func (s *Store) Patch(ctx context.Context, ns, name string, pt PatchType, data []byte, opts WriteOptions) (api.Object, error) {
	apply, err := s.patcher(pt, data)
	if err != nil {
		return nil, err
	}
	checkFields, err := s.patchFieldCheck(pt, data, opts.FieldValidation)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, ns, name, "", opts, func(cur api.Object) (api.Object, error) {
		curJSON, err := json.Marshal(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(curJSON)
		if err != nil {
			return nil, err
		}
		if checkFields != nil {
			if err := checkFields(ctx, patched); err != nil {
				return nil, err
			}
		}
		obj := s.Info.New()
		if err := fieldvalidation.Decode(patched, obj); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch produced an object that cannot be decoded: %v", err))
		}
		if rv := obj.GetObjectMeta().ResourceVersion; rv != "" && rv != cur.GetObjectMeta().ResourceVersion {
			return nil, apierrors.NewConflict(s.GR, name, errors.New(apierrors.OptimisticLockErrorMsg))
		}
		if tm := obj.GetTypeMeta(); (tm.Kind != "" && tm.Kind != s.Info.Kind) || (tm.APIVersion != "" && tm.APIVersion != s.Info.GroupVersion()) {
			return nil, apierrors.NewBadRequest("the patch may not change the kind or apiVersion of the object")
		}
		return obj, nil
	})
}

func (s *Store) patcher(pt PatchType, data []byte) (func([]byte) ([]byte, error), error) {
	return s.patcherFor(pt, data, patch.KubernetesSchema(s.Info.Kind))
}

// patcherFor returns a function applying the patch to a current encoding.
func (s *Store) patcherFor(pt PatchType, data []byte, schema patch.Schema) (func([]byte) ([]byte, error), error) {
	var t patch.Type
	switch PatchType(strings.TrimSpace(strings.Split(string(pt), ";")[0])) {
	case MergePatch:
		t = patch.MergePatchType
	case StrategicPatch:
		t = patch.StrategicMergePatchType
	case JSONPatch:
		t = patch.JSONPatchType
	default:
		return nil, apierrors.NewUnsupportedMediaType(PatchTypes)
	}
	if !json.Valid(data) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: invalid JSON: %s", truncate(string(data), 200)))
	}
	return func(cur []byte) ([]byte, error) {
		out, err := patch.Apply(t, cur, data, schema)
		if t == patch.JSONPatchType && errors.Is(err, patch.ErrCannotApply) {
			// kube-apiserver answers a JSON patch that does not apply (a
			// failed test, a missing path, copies beyond the copy limit)
			// with apimachinery's generic 422, whose message is its own and
			// not the patch library's.
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", apierrors.GroupResource{}, "", err.Error(), 0, false)
		}
		if err != nil {
			return nil, patchError(err)
		}
		return out, nil
	}, nil
}

// patchError maps api/patch's error classes to Statuses.
func patchError(err error) error {
	switch {
	case errors.Is(err, patch.ErrCannotApply):
		return apierrors.NewGeneric(422, api.StatusReasonInvalid, err.Error())
	case errors.Is(err, patch.ErrTooLarge):
		return apierrors.NewRequestEntityTooLarge(err.Error())
	case errors.Is(err, patch.ErrUnsupportedType):
		return apierrors.NewGeneric(415, api.StatusReasonUnsupportedMediaType, err.Error())
	}
	return apierrors.NewBadRequest(err.Error())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
