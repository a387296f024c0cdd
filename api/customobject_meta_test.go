package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestMetaObject checks that the unstructured metadata made without the
// encoding is what the encoding gives, for every field of ObjectMeta.
func TestMetaObject(t *testing.T) {
	t.Parallel()
	yes, no, grace := true, false, int64(30)
	ts := NewTime(time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC))
	full := ObjectMeta{Name: "w", GenerateName: "w-", Namespace: "default", UID: "u-1", ResourceVersion: "42",
		Generation: 3, CreationTimestamp: ts, DeletionTimestamp: &ts, DeletionGracePeriodSeconds: &grace,
		Labels: map[string]string{"app": "<b&c>"}, Annotations: map[string]string{"note": "ünïcode \"quoted\""},
		OwnerReferences: []OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u-2", Controller: &yes, BlockOwnerDeletion: &no},
			{APIVersion: "v1", Kind: "Pod", Name: "q", UID: "u-3"}},
		Finalizers: []string{"example.com/f"},
		ManagedFields: []ManagedFieldsEntry{{Manager: "m", Operation: ManagedFieldsOperationUpdate, APIVersion: "example.com/v1",
			Time: &ts, FieldsType: "FieldsV1", FieldsV1: &FieldsV1{Raw: []byte(`{"f:spec": {"f:n": {}, "k:{\"port\":80}": {".": {}}}}`)},
			Subresource: "status"}, {Manager: "empty", FieldsV1: &FieldsV1{}}}}
	// Every field is set, so a field added to ObjectMeta fails here until
	// metaObject knows it.
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test's ObjectMeta leaves %s unset", v.Type().Field(i).Name)
		}
	}
	zero := Time{}
	cases := map[string]struct {
		meta   ObjectMeta
		fastOK bool
	}{
		"full":                        {full, true},
		"empty":                       {ObjectMeta{}, true},
		"empty collections":           {ObjectMeta{Labels: map[string]string{}, Finalizers: []string{}, OwnerReferences: []OwnerReference{}}, true},
		"zero deletion time":          {ObjectMeta{DeletionTimestamp: &zero, ManagedFields: []ManagedFieldsEntry{{Time: &zero}}}, true},
		"invalid UTF-8":               {ObjectMeta{Name: "a\xffb"}, false},
		"invalid UTF-8 label":         {ObjectMeta{Labels: map[string]string{"a": "\xff"}}, false},
		"fieldsV1 not an object":      {ObjectMeta{ManagedFields: []ManagedFieldsEntry{{FieldsV1: &FieldsV1{Raw: []byte(`[1]`)}}}}, false},
		"fieldsV1 with large numbers": {ObjectMeta{ManagedFields: []ManagedFieldsEntry{{FieldsV1: &FieldsV1{Raw: []byte(`{"v:1.5":{},"i:9007199254740993":{}}`)}}}}, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := metaObjectJSON(&c.meta)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := metaObject(&c.meta)
			if ok != c.fastOK {
				t.Fatalf("ok = %v, want %v", ok, c.fastOK)
			}
			if ok && !reflect.DeepEqual(got, want) {
				t.Errorf("metaObject\n%#v\nwant\n%#v", got, want)
			}
			o := CustomObject{ObjectMeta: c.meta}
			m, err := o.Object()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m["metadata"], want) {
				t.Errorf("Object's metadata\n%#v\nwant\n%#v", m["metadata"], want)
			}
			var viaJSON, direct ObjectMeta
			if err := setMetaObjectJSON(want, &viaJSON); err != nil {
				t.Fatal(err)
			}
			if !setMetaObject(runtimeCopy(want), &direct) {
				if c.fastOK {
					t.Fatal("setMetaObject gave up")
				}
				return
			}
			if !reflect.DeepEqual(direct, viaJSON) {
				t.Errorf("setMetaObject\n%#v\nwant\n%#v", direct, viaJSON)
			}
		})
	}
}

// TestSetMetaObjectGivesUp checks that what the direct reading does not
// take ends as the decoder ends it, through SetObject.
func TestSetMetaObjectGivesUp(t *testing.T) {
	t.Parallel()
	for name, meta := range map[string]map[string]any{
		"key in another case":  {"Name": "w"},
		"unknown key":          {"name": "w", "extra": int64(1)},
		"whole float":          {"generation": 2.0},
		"fraction":             {"generation": 2.5},
		"number as string":     {"generation": "2"},
		"null finalizer":       {"finalizers": []any{"a", nil}},
		"null label":           {"labels": map[string]any{"a": nil}},
		"number label":         {"labels": map[string]any{"a": int64(1)}},
		"bad time":             {"creationTimestamp": "yesterday"},
		"owner ref extra key":  {"ownerReferences": []any{map[string]any{"name": "p", "x": "y"}}},
		"owner ref not a map":  {"ownerReferences": []any{"p"}},
		"fieldsV1 not a map":   {"managedFields": []any{map[string]any{"fieldsV1": []any{}}}},
		"invalid UTF-8 name":   {"name": "a\xff"},
		"invalid UTF-8 label":  {"labels": map[string]any{"a\xff": "b"}},
		"managedFields string": {"managedFields": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			var direct ObjectMeta
			if setMetaObject(meta, &direct) {
				t.Fatalf("setMetaObject took %#v", meta)
			}
			if !reflect.DeepEqual(direct, ObjectMeta{}) {
				t.Errorf("setMetaObject changed the metadata it gave up on: %#v", direct)
			}
			var viaJSON ObjectMeta
			wantErr := setMetaObjectJSON(meta, &viaJSON)
			var o CustomObject
			err := o.SetObject(map[string]any{"metadata": meta})
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != "metadata: "+wantErr.Error()) {
				t.Fatalf("SetObject: %v, want %v", err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(o.ObjectMeta, viaJSON) {
				t.Errorf("SetObject\n%#v\nwant\n%#v", o.ObjectMeta, viaJSON)
			}
		})
	}
}

// setMetaObjectJSON is setMetaObject by way of the encoding.
func setMetaObjectJSON(meta map[string]any, m *ObjectMeta) error {
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, m)
}

func runtimeCopy(m map[string]any) map[string]any {
	var o CustomObject
	o.Content = map[string]any{"m": m}
	return DeepCopyObject(&o).(*CustomObject).Content["m"].(map[string]any)
}

// TestFieldSet checks the FieldsV1 reader against the general decoder.
func TestFieldSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw string
		ok  bool
	}{
		{`{}`, true},
		{` { "f:metadata" : { "f:labels" : { "." : {} , "f:app" : {} } } , "f:spec" : {} } `, true},
		{`{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}`, true},
		{`{"f:a\u00e9\n":{},"f:a":{"f:b":{}},"f:a":{}}`, true},
		{`{"f:ü":{}}`, true},
		{`{"f:a":1}`, false},
		{`{"f:a":[]}`, false},
		{`{"f:a":{}}x`, false},
		{`{"f:a":{}`, false},
		{`{"f:a" {}}`, false},
		{`{"f:a":{},}`, false},
		{`{"f:a` + "\x01" + `":{}}`, false},
		{`{"f:a` + "\xff" + `":{}}`, false},
		{`{"f:a\q":{}}`, false},
		{`[]`, false},
		{``, false},
	} {
		got, ok := fieldSet([]byte(c.raw))
		if ok != c.ok {
			t.Errorf("%q: ok = %v, want %v", c.raw, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		want, err := DecodeJSONObject([]byte(c.raw))
		if err != nil {
			t.Fatalf("%q: %v", c.raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %#v, want %#v", c.raw, got, want)
		}
	}
}
