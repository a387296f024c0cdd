package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// CustomObject is an object of a custom resource (one a
// CustomResourceDefinition defines). Its type and metadata are typed like
// every kind's; its status and every other top-level field are generic
// JSON values in Kubernetes' unstructured form: map[string]any, []any,
// string, int64 (integers), float64 (other numbers), bool and nil.
//
// The generic rules of the apiserver (status subresource, generation) see
// Status as the status and Content as the spec.
type CustomObject struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	// Status is the top-level "status" field, nil when absent.
	Status any
	// Content holds the top-level fields other than apiVersion, kind,
	// metadata and status.
	Content map[string]any
}

// MarshalJSON writes the object with its top-level keys sorted, as
// Kubernetes writes unstructured objects.
func (o CustomObject) MarshalJSON() ([]byte, error) {
	top := make(map[string]any, len(o.Content)+4)
	for k, v := range o.Content {
		top[k] = v
	}
	if o.APIVersion != "" {
		top["apiVersion"] = o.APIVersion
	}
	if o.Kind != "" {
		top["kind"] = o.Kind
	}
	top["metadata"] = &o.ObjectMeta
	if o.Status != nil {
		top["status"] = o.Status
	}
	return json.Marshal(top)
}

// UnmarshalJSON reads an object; numbers become int64 when they are
// integers, float64 otherwise.
func (o *CustomObject) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	if top == nil {
		return errors.New("expected a JSON object, got null")
	}
	*o = CustomObject{}
	for k, raw := range top {
		switch k {
		case "apiVersion", "kind":
			var s *string
			if err := json.Unmarshal(raw, &s); err != nil {
				return fmt.Errorf("%s: must be a string", k)
			}
			if s != nil && k == "apiVersion" {
				o.APIVersion = *s
			} else if s != nil {
				o.Kind = *s
			}
		case "metadata":
			if err := json.Unmarshal(raw, &o.ObjectMeta); err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
		default:
			v, err := decodeJSONValue(raw)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if k == "status" {
				o.Status = v
				continue
			}
			if o.Content == nil {
				o.Content = make(map[string]any, len(top))
			}
			o.Content[k] = v
		}
	}
	return nil
}

// Object returns the whole object in unstructured form (metadata as a
// map too), as the schema validators and CEL see it. The values below the
// top level are the object's own, not copies.
func (o *CustomObject) Object() (map[string]any, error) {
	out := make(map[string]any, len(o.Content)+4)
	for k, v := range o.Content {
		out[k] = v
	}
	if o.APIVersion != "" {
		out["apiVersion"] = o.APIVersion
	}
	if o.Kind != "" {
		out["kind"] = o.Kind
	}
	meta, ok := metaObject(&o.ObjectMeta)
	if !ok {
		var err error
		if meta, err = metaObjectJSON(&o.ObjectMeta); err != nil {
			return nil, err
		}
	}
	out["metadata"] = meta
	if o.Status != nil {
		out["status"] = o.Status
	}
	return out, nil
}

// SetObject replaces the object with the unstructured content obj, whose
// values it takes over.
func (o *CustomObject) SetObject(obj map[string]any) error {
	next := CustomObject{}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind":
			s, ok := v.(string)
			if !ok && v != nil {
				return fmt.Errorf("%s: must be a string", k)
			}
			if k == "apiVersion" {
				next.APIVersion = s
			} else {
				next.Kind = s
			}
		case "metadata":
			if v == nil {
				continue
			}
			if m, ok := v.(map[string]any); ok && setMetaObject(m, &next.ObjectMeta) {
				continue
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &next.ObjectMeta); err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
		case "status":
			next.Status = v
		default:
			if next.Content == nil {
				next.Content = make(map[string]any, len(obj))
			}
			next.Content[k] = v
		}
	}
	*o = next
	return nil
}

func decodeJSONValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); ok {
		return number(n)
	}
	if err := convertNumbers(v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeJSONObject decodes a JSON object in Kubernetes' unstructured form:
// integers as int64, other numbers as float64.
func DecodeJSONObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the JSON object")
	}
	if top == nil {
		return nil, errors.New("expected a JSON object, got null")
	}
	if err := convertNumbers(top); err != nil {
		return nil, err
	}
	return top, nil
}

func convertNumbers(v any) error {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if n, ok := e.(json.Number); ok {
				c, err := number(n)
				if err != nil {
					return err
				}
				t[k] = c
				continue
			}
			if err := convertNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range t {
			if n, ok := e.(json.Number); ok {
				c, err := number(n)
				if err != nil {
					return err
				}
				t[i] = c
				continue
			}
			if err := convertNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func number(n json.Number) (any, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", n, err)
	}
	return f, nil
}
