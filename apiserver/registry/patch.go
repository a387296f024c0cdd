package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/patch"
)

// PatchType is the Content-Type of a PATCH body.
type PatchType string

// The patch types Kubernetes accepts (server-side apply is not implemented).
const (
	JSONPatch      PatchType = "application/json-patch+json"
	MergePatch     PatchType = "application/merge-patch+json"
	StrategicPatch PatchType = "application/strategic-merge-patch+json"
	ApplyPatch     PatchType = "application/apply-patch+yaml"
)

// PatchTypes are the patch formats served, in kube-apiserver's order; a
// PATCH in any other is 415 with this list.
var PatchTypes = []string{string(JSONPatch), string(MergePatch), string(StrategicPatch)}

// Patch applies a patch to the current object and stores the result with the
// rules of Update. A resourceVersion set by the patch is a precondition;
// otherwise a lost race re-reads and re-applies the patch to the newer object.
func (s *Store) Patch(ctx context.Context, ns, name string, pt PatchType, data []byte, opts WriteOptions) (api.Object, error) {
	apply, err := s.patcher(pt, data)
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
		obj := s.Info.New()
		if err := json.Unmarshal(patched, obj); err != nil {
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
