package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
)

// reviewAPIVersion picks the AdmissionReview version a webhook accepts:
// the first of its list this apiserver speaks (v1 and v1beta1 share the
// request's shape).
func reviewAPIVersion(versions []string) (string, bool) {
	for _, v := range versions {
		if v == "v1" || v == "v1beta1" {
			return "admission.k8s.io/" + v, true
		}
	}
	return "", false
}

// newReview builds the AdmissionReview of a for webhook target t.
func newReview(a *admission.Attributes, t *matching.Target, apiVersion string) (*admissionv1.AdmissionReview, error) {
	obj, old := a.Object, a.OldObject
	if t.ToTarget != nil {
		if obj != nil {
			obj = t.ToTarget(obj)
		}
		if old != nil {
			old = t.ToTarget(old)
		}
	}
	objJSON, err := encodeObject(obj, t.Resource)
	if err != nil {
		return nil, err
	}
	oldJSON, err := encodeObject(old, t.Resource)
	if err != nil {
		return nil, err
	}
	kind := kindOf(a.Object, a.Resource)
	targetKind := kind
	if t.ToTarget != nil {
		targetKind = metav1.GroupVersionKind{Group: t.Resource.Group, Version: t.Resource.Version, Kind: t.Resource.Kind}
	}
	dry := a.DryRun
	r := &admissionv1.AdmissionRequest{
		UID:                types.UID(uuid.NewString()),
		Kind:               targetKind,
		Resource:           metav1.GroupVersionResource{Group: t.Resource.Group, Version: t.Resource.Version, Resource: t.Resource.Resource},
		SubResource:        t.Subresource,
		RequestKind:        &kind,
		RequestResource:    &metav1.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource},
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		Object:             runtime.RawExtension{Raw: objJSON},
		OldObject:          runtime.RawExtension{Raw: oldJSON},
		DryRun:             &dry,
		Options:            runtime.RawExtension{Raw: optionsFor(a)},
	}
	if u := a.User; u != nil {
		r.UserInfo = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
		if len(u.Extra) > 0 {
			r.UserInfo.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range u.Extra {
				r.UserInfo.Extra[k] = v
			}
		}
	}
	rv := &admissionv1.AdmissionReview{Request: r}
	rv.APIVersion, rv.Kind = apiVersion, "AdmissionReview"
	return rv, nil
}

// kindOf is the kind of the object a request writes: its own apiVersion and
// kind when set (a subresource may take another kind), else the resource's.
func kindOf(obj api.Object, r api.ResourceInfo) metav1.GroupVersionKind {
	if obj != nil {
		if tm := obj.GetTypeMeta(); tm.Kind != "" && tm.APIVersion != "" {
			g, v := "", tm.APIVersion
			if i := slices.Index([]byte(tm.APIVersion), '/'); i >= 0 {
				g, v = tm.APIVersion[:i], tm.APIVersion[i+1:]
			}
			return metav1.GroupVersionKind{Group: g, Version: v, Kind: tm.Kind}
		}
	}
	return metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// encodeObject is the JSON of obj with its apiVersion and kind (nil for no
// object). Shared cached objects are not modified.
func encodeObject(obj api.Object, r api.ResourceInfo) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	if tm := obj.GetTypeMeta(); tm.Kind == "" || tm.APIVersion == "" {
		obj = api.DeepCopyObject(obj)
		tm := obj.GetTypeMeta()
		tm.Kind, tm.APIVersion = r.Kind, r.GroupVersion()
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("could not create admission objects: %w", err)
	}
	return data, nil
}

// optionsFor is the operation's options object, as kube sends it.
func optionsFor(a *admission.Attributes) []byte {
	kind := map[admission.Operation]string{admission.Create: "CreateOptions", admission.Update: "UpdateOptions",
		admission.Delete: "DeleteOptions"}[a.Operation]
	if kind == "" {
		return nil
	}
	opts := map[string]any{"kind": kind, "apiVersion": "meta.k8s.io/v1"}
	if a.DryRun {
		opts["dryRun"] = []string{"All"}
	}
	data, _ := json.Marshal(opts)
	return data
}

// result is a verified webhook answer.
type result struct {
	allowed  bool
	status   *metav1.Status
	patch    []byte
	warnings []string
}

// verify checks an answer as kube's VerifyAdmissionResponse does.
func verify(uid types.UID, apiVersion string, mutating bool, rv *admissionv1.AdmissionReview) (*result, error) {
	r := rv.Response
	if r == nil {
		return nil, fmt.Errorf("webhook response was absent")
	}
	if apiVersion == "admission.k8s.io/v1" {
		if r.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.UID)
		}
		if rv.APIVersion != apiVersion || rv.Kind != "AdmissionReview" {
			return nil, fmt.Errorf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", rv.APIVersion, rv.Kind)
		}
	}
	out := &result{allowed: r.Allowed, status: r.Result, warnings: r.Warnings}
	if !mutating {
		if len(r.Patch) > 0 {
			return nil, fmt.Errorf("validating webhook may not return response.patch")
		}
		if r.PatchType != nil {
			return nil, fmt.Errorf("validating webhook may not return response.patchType")
		}
		return out, nil
	}
	if apiVersion == "admission.k8s.io/v1" {
		if len(r.Patch) > 0 && r.PatchType == nil {
			return nil, fmt.Errorf("webhook returned response.patch but not response.patchType")
		}
		if len(r.Patch) == 0 && r.PatchType != nil {
			return nil, fmt.Errorf("webhook returned response.patchType but not response.patch")
		}
		if r.PatchType != nil && *r.PatchType != admissionv1.PatchTypeJSONPatch {
			if *r.PatchType == "" {
				return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", *r.PatchType)
			}
			return nil, fmt.Errorf("unsupported patch type %q", *r.PatchType)
		}
	}
	out.patch = r.Patch
	return out, nil
}

// denied is the error of a webhook's refusal, as kube's ToStatusErr forms
// it: the webhook's code (at least 400) and its message after "admission
// webhook NAME denied the request".
func denied(name string, s *metav1.Status) *apierrors.StatusError {
	var st api.Status
	if s != nil {
		if data, err := json.Marshal(s); err == nil {
			_ = json.Unmarshal(data, &st)
		}
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	st.Status = api.StatusFailure
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = by + ": " + st.Message
	case st.Reason != "":
		st.Message = by + ": " + string(st.Reason)
	default:
		st.Message = by + " without explanation"
	}
	return apierrors.FromStatus(st)
}
