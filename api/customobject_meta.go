package api

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// metaObject returns metadata in unstructured form: exactly what decoding
// json.Marshal(meta) with DecodeJSONObject gives, built without the
// encoding. The custom resource strategies convert a custom object several
// times per write, and the JSON round trip of its metadata was most of that
// cost. It gives up (ok false) on what it does not reproduce byte for byte
// (a string that is not valid UTF-8, which the encoder would alter, or
// managedFields whose fieldsV1 is not a JSON object); the caller then takes
// the JSON road.
func metaObject(m *ObjectMeta) (out map[string]any, ok bool) {
	ok = true
	str := func(key, s string) {
		if s == "" {
			return
		}
		ok = ok && utf8.ValidString(s)
		out[key] = s
	}
	out = make(map[string]any, 10)
	str("name", m.Name)
	str("generateName", m.GenerateName)
	str("namespace", m.Namespace)
	str("uid", string(m.UID))
	str("resourceVersion", m.ResourceVersion)
	if m.Generation != 0 {
		out["generation"] = m.Generation
	}
	if !m.CreationTimestamp.IsZero() {
		out["creationTimestamp"] = timeValue(m.CreationTimestamp)
	}
	if m.DeletionTimestamp != nil {
		out["deletionTimestamp"] = timeValue(*m.DeletionTimestamp)
	}
	if m.DeletionGracePeriodSeconds != nil {
		out["deletionGracePeriodSeconds"] = *m.DeletionGracePeriodSeconds
	}
	for key, set := range map[string]map[string]string{"labels": m.Labels, "annotations": m.Annotations} {
		if len(set) == 0 {
			continue
		}
		vals := make(map[string]any, len(set))
		for k, v := range set {
			ok = ok && utf8.ValidString(k) && utf8.ValidString(v)
			vals[k] = v
		}
		out[key] = vals
	}
	if len(m.OwnerReferences) > 0 {
		refs := make([]any, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			ok = ok && utf8.ValidString(r.APIVersion) && utf8.ValidString(r.Kind) &&
				utf8.ValidString(r.Name) && utf8.ValidString(string(r.UID))
			ref := map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": string(r.UID)}
			if r.Controller != nil {
				ref["controller"] = *r.Controller
			}
			if r.BlockOwnerDeletion != nil {
				ref["blockOwnerDeletion"] = *r.BlockOwnerDeletion
			}
			refs[i] = ref
		}
		out["ownerReferences"] = refs
	}
	if len(m.Finalizers) > 0 {
		fins := make([]any, len(m.Finalizers))
		for i, f := range m.Finalizers {
			ok = ok && utf8.ValidString(f)
			fins[i] = f
		}
		out["finalizers"] = fins
	}
	if len(m.ManagedFields) > 0 {
		entries := make([]any, len(m.ManagedFields))
		for i := range m.ManagedFields {
			e, eok := managedFieldsObject(&m.ManagedFields[i])
			ok = ok && eok
			entries[i] = e
		}
		out["managedFields"] = entries
	}
	return out, ok
}

func managedFieldsObject(e *ManagedFieldsEntry) (map[string]any, bool) {
	out := make(map[string]any, 7)
	ok := true
	for key, s := range map[string]string{"manager": e.Manager, "operation": string(e.Operation),
		"apiVersion": e.APIVersion, "fieldsType": e.FieldsType, "subresource": e.Subresource} {
		if s != "" {
			ok = ok && utf8.ValidString(s)
			out[key] = s
		}
	}
	if e.Time != nil {
		out["time"] = timeValue(*e.Time)
	}
	if e.FieldsV1 != nil {
		if e.FieldsV1.Raw == nil {
			out["fieldsV1"] = nil
		} else {
			set, err := DecodeJSONObject(e.FieldsV1.Raw)
			ok = ok && err == nil
			out["fieldsV1"] = set
		}
	}
	return out, ok
}

// timeValue is Time's JSON value in unstructured form.
func timeValue(t Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// metaObjectJSON is metaObject by way of the encoding.
func metaObjectJSON(m *ObjectMeta) (map[string]any, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return DecodeJSONObject(raw)
}
