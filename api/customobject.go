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
	top, err := DecodeJSONObject(data)
	if err != nil {
		return err
	}
	*o = CustomObject{}
	if v, ok := top["apiVersion"]; ok {
		s, isString := v.(string)
		if !isString && v != nil {
			return errors.New("apiVersion: must be a string")
		}
		o.APIVersion = s
		delete(top, "apiVersion")
	}
	if v, ok := top["kind"]; ok {
		s, isString := v.(string)
		if !isString && v != nil {
			return errors.New("kind: must be a string")
		}
		o.Kind = s
		delete(top, "kind")
	}
	if v, ok := top["metadata"]; ok {
		delete(top, "metadata")
		if v != nil {
			if _, isMap := v.(map[string]any); !isMap {
				return errors.New("metadata: must be an object")
			}
			// Re-read the metadata with its types.
			raw, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &o.ObjectMeta); err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
		}
	}
	if v, ok := top["status"]; ok {
		o.Status = v
		delete(top, "status")
	}
	if len(top) > 0 {
		o.Content = top
	}
	return nil
}

// Object returns the whole object in unstructured form (metadata as a
// map too), as the schema validators and CEL see it.
func (o *CustomObject) Object() (map[string]any, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	return DecodeJSONObject(data)
}

// SetObject replaces the object with the unstructured content obj.
func (o *CustomObject) SetObject(obj map[string]any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return o.UnmarshalJSON(data)
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
