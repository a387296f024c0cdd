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
			set, sok := fieldSet(e.FieldsV1.Raw)
			if !sok {
				var err error
				set, err = DecodeJSONObject(e.FieldsV1.Raw)
				ok = ok && err == nil
			}
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

// setMetaObject reads unstructured metadata into m as json.Unmarshal of
// its encoding would, without the encoding. It gives up (ok false, m
// unchanged) on anything but the plain shapes metaObject makes (a key it
// does not know, which the decoder would match case-insensitively, a
// number that is not an int64, a null in a list or set), so that the
// caller takes the JSON road and its errors.
func setMetaObject(obj map[string]any, m *ObjectMeta) (ok bool) {
	var next ObjectMeta
	ok = true
	str := func(v any) string {
		s, isStr := validString(v)
		ok = ok && (isStr || v == nil)
		return s
	}
	for k, v := range obj {
		switch k {
		case "name":
			next.Name = str(v)
		case "generateName":
			next.GenerateName = str(v)
		case "namespace":
			next.Namespace = str(v)
		case "uid":
			next.UID = UID(str(v))
		case "resourceVersion":
			next.ResourceVersion = str(v)
		case "generation":
			n, isInt := v.(int64)
			ok = ok && (isInt || v == nil)
			next.Generation = n
		case "creationTimestamp":
			t, tok := timeFromValue(v)
			ok = ok && tok
			next.CreationTimestamp = t
		case "deletionTimestamp":
			if v != nil {
				t, tok := timeFromValue(v)
				ok = ok && tok
				next.DeletionTimestamp = &t
			}
		case "deletionGracePeriodSeconds":
			if v != nil {
				n, isInt := v.(int64)
				ok = ok && isInt
				next.DeletionGracePeriodSeconds = &n
			}
		case "labels", "annotations":
			set, sok := stringSet(v)
			ok = ok && sok
			if k == "labels" {
				next.Labels = set
			} else {
				next.Annotations = set
			}
		case "finalizers":
			if v != nil {
				list, isList := v.([]any)
				ok = ok && isList
				next.Finalizers = make([]string, len(list))
				for i, e := range list {
					s, isStr := validString(e)
					ok = ok && isStr
					next.Finalizers[i] = s
				}
			}
		case "ownerReferences":
			if v != nil {
				list, isList := v.([]any)
				ok = ok && isList
				next.OwnerReferences = make([]OwnerReference, len(list))
				for i, e := range list {
					ok = ok && setOwnerReference(e, &next.OwnerReferences[i])
				}
			}
		case "managedFields":
			if v != nil {
				list, isList := v.([]any)
				ok = ok && isList
				next.ManagedFields = make([]ManagedFieldsEntry, len(list))
				for i, e := range list {
					ok = ok && setManagedFields(e, &next.ManagedFields[i])
				}
			}
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	*m = next
	return true
}

func setOwnerReference(v any, r *OwnerReference) bool {
	obj, isMap := v.(map[string]any)
	if !isMap {
		return false
	}
	for k, v := range obj {
		var ok bool
		switch k {
		case "apiVersion":
			r.APIVersion, ok = validString(v)
		case "kind":
			r.Kind, ok = validString(v)
		case "name":
			r.Name, ok = validString(v)
		case "uid":
			var s string
			s, ok = validString(v)
			r.UID = UID(s)
		case "controller", "blockOwnerDeletion":
			var b bool
			if b, ok = v.(bool); ok && k == "controller" {
				r.Controller = &b
			} else if ok {
				r.BlockOwnerDeletion = &b
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func setManagedFields(v any, e *ManagedFieldsEntry) bool {
	obj, isMap := v.(map[string]any)
	if !isMap {
		return false
	}
	for k, v := range obj {
		var ok bool
		var s string
		switch k {
		case "manager":
			e.Manager, ok = validString(v)
		case "operation":
			s, ok = validString(v)
			e.Operation = ManagedFieldsOperationType(s)
		case "apiVersion":
			e.APIVersion, ok = validString(v)
		case "fieldsType":
			e.FieldsType, ok = validString(v)
		case "subresource":
			e.Subresource, ok = validString(v)
		case "time":
			if ok = v == nil; !ok {
				var t Time
				t, ok = timeFromValue(v)
				e.Time = &t
			}
		case "fieldsV1":
			if ok = v == nil; !ok {
				set, isMap := v.(map[string]any)
				if !isMap {
					return false
				}
				raw, err := json.Marshal(set)
				ok = err == nil
				e.FieldsV1 = &FieldsV1{Raw: raw}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// timeFromValue reads a Time's unstructured value as Time.UnmarshalJSON
// reads its JSON.
func timeFromValue(v any) (Time, bool) {
	if v == nil {
		return Time{}, true
	}
	s, ok := v.(string)
	if !ok {
		return Time{}, false
	}
	if s == "" {
		return Time{}, true
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return Time{}, false
	}
	return Time{t.Local()}, true
}

// stringSet reads labels or annotations: a map of strings (nil for null).
func stringSet(v any) (map[string]string, bool) {
	if v == nil {
		return nil, true
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	set := make(map[string]string, len(obj))
	for k, e := range obj {
		s, ok := validString(e)
		if !ok || !utf8.ValidString(k) {
			return nil, false
		}
		set[k] = s
	}
	return set, true
}

// validString is v as a string the encoding keeps as it is (valid UTF-8).
func validString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && utf8.ValidString(s)
}

// fieldSet decodes a FieldsV1 set, a JSON object whose values are all
// objects ({"f:spec":{"f:size":{}}}), faster than the general decoder;
// ok is false for anything else (a number, a list, a control character,
// invalid UTF-8), which the general decoder then reads.
func fieldSet(raw []byte) (map[string]any, bool) {
	p := fieldSetParser{data: raw}
	set, ok := p.object()
	p.space()
	return set, ok && p.pos == len(p.data)
}

type fieldSetParser struct {
	data []byte
	pos  int
}

func (p *fieldSetParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// next skips white space and consumes c if it comes next.
func (p *fieldSetParser) next(c byte) bool {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *fieldSetParser) object() (map[string]any, bool) {
	if !p.next('{') {
		return nil, false
	}
	out := map[string]any{}
	if p.next('}') {
		return out, true
	}
	for {
		key, ok := p.string()
		if !ok || !p.next(':') {
			return nil, false
		}
		val, ok := p.object()
		if !ok {
			return nil, false
		}
		out[key] = val
		if p.next('}') {
			return out, true
		}
		if !p.next(',') {
			return nil, false
		}
	}
}

func (p *fieldSetParser) string() (string, bool) {
	p.space()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", false
	}
	start, escaped := p.pos, false
	for p.pos++; p.pos < len(p.data); p.pos++ {
		switch c := p.data[p.pos]; {
		case c == '\\':
			escaped = true
			p.pos++
		case c < 0x20:
			return "", false
		case c == '"':
			p.pos++
			tok := p.data[start:p.pos]
			if !utf8.Valid(tok) {
				return "", false
			}
			if !escaped {
				return string(tok[1 : len(tok)-1]), true
			}
			var s string
			if err := json.Unmarshal(tok, &s); err != nil {
				return "", false
			}
			return s, true
		}
	}
	return "", false
}
