package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// wantsYAML reports whether the client prefers YAML over JSON.
func wantsYAML(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, "yaml") {
		return false // the common case, without parsing media types
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		switch mt {
		case "application/yaml":
			return true
		case "application/json", "*/*", "application/*":
			return false
		}
	}
	return false
}

// writeRaw writes already-encoded JSON, converting to YAML if asked.
func writeRaw(w http.ResponseWriter, r *http.Request, code int, data []byte) {
	if r != nil && wantsYAML(r) {
		if y, err := yaml.JSONToYAML(data); err == nil {
			w.Header().Set("Content-Type", "application/yaml")
			w.WriteHeader(code)
			_, _ = w.Write(y)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
	_, _ = w.Write([]byte("\n"))
}

// readBody reads the request body within the size limit and returns it as JSON.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apierrors.NewRequestEntityTooLarge("limit is " + itoa(mbe.Limit))
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to read the request body: %v", err))
	}
	ct := r.Header.Get("Content-Type")
	mt := "application/json"
	if ct != "" {
		parsed, _, err := mime.ParseMediaType(ct)
		if err != nil {
			return nil, apierrors.NewUnsupportedMediaType(ct)
		}
		mt = parsed
	}
	switch mt {
	case "application/json", "application/merge-patch+json", "application/strategic-merge-patch+json",
		"application/json-patch+json", "*/*", "text/plain":
		return data, nil
	case "application/yaml", "application/x-yaml", "text/yaml":
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error converting YAML to JSON: %v", err))
		}
		return j, nil
	}
	return nil, apierrors.NewUnsupportedMediaType(ct)
}

// decodeBody reads the request body and decodes it into obj (see decodeInto).
func decodeBody(r *http.Request, obj any, gv, kind string) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeInto(data, obj, gv, kind)
}

// decodeInto decodes a request body into obj, checking that the body's kind
// and apiVersion, when given, are the resource's. Unknown fields are ignored,
// as Kubernetes does by default.
func decodeInto(data []byte, obj any, gv, kind string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return apierrors.NewBadRequest("the request body is empty: expected a " + kind + " object")
	}
	// One pass when the body decodes: obj's own TypeMeta then holds the
	// body's kind and apiVersion. Errors take the two-pass path below, so
	// a wrong kind or apiVersion is reported before a field's decode error.
	if typed, ok := obj.(interface{ GetTypeMeta() *api.TypeMeta }); ok && *typed.GetTypeMeta() == (api.TypeMeta{}) {
		if json.Unmarshal(data, obj) == nil {
			if err := checkType(*typed.GetTypeMeta(), gv, kind); err != nil {
				return err
			}
			return nil
		}
		reset(obj)
	}
	var tm api.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", kind, gv, kind, cleanJSONError(err)))
	}
	if err := checkType(tm, gv, kind); err != nil {
		return err
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", kind, gv, kind, cleanJSONError(err)))
	}
	return nil
}

// checkType checks that a body's kind and apiVersion, when given, are the resource's.
func checkType(tm api.TypeMeta, gv, kind string) error {
	if tm.APIVersion != "" && tm.APIVersion != gv {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, gv))
	}
	if tm.Kind != "" && tm.Kind != kind {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the kind in the data (%s) does not match the expected kind", tm.Kind, gv, kind, tm.Kind))
	}
	return nil
}

// reset sets what the pointer obj points to back to its zero value.
func reset(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().SetZero()
	}
}

func cleanJSONError(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("json: cannot unmarshal %s into Go value of type %s at field %s", ute.Value, ute.Type, ute.Field)
	}
	return err.Error()
}
