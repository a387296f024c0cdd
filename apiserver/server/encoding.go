package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
	"github.com/minik8s/minik8s/apiserver/protobuf"
)

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// writeRaw writes already-encoded JSON in the encoding the request
// negotiated (negotiateOutput): as is, as YAML or as protobuf. A document
// with no protobuf form (/version) is written as JSON, which every client
// reads; a failed negotiation is answered in JSON too, as kube-apiserver
// does (the API handlers refuse it with 406 before they act).
func writeRaw(w http.ResponseWriter, r *http.Request, code int, data []byte) {
	media := mediaJSON
	if r != nil {
		if out, err := negotiateOutput(r); err == nil {
			media = out.media
		}
	}
	writeRawIn(w, media, code, data)
}

// writeRawIn writes already-encoded JSON in media, as writeRaw.
func writeRawIn(w http.ResponseWriter, media mediaType, code int, data []byte) {
	switch media {
	case mediaYAML:
		if y, err := yaml.JSONToYAML(data); err == nil {
			write(w, code, mediaYAML.String(), y)
			return
		}
	case mediaProtobuf:
		pb, err := protobuf.Encode(data)
		switch {
		case err == nil:
			write(w, code, protobuf.ContentType, pb)
			return
		case !errors.Is(err, protobuf.ErrNotRegistered):
			code = http.StatusInternalServerError
			data, _ = json.Marshal(apierrors.NewInternalError(err).Status())
		}
	}
	write(w, code, mediaJSON.String(), data)
	_, _ = w.Write([]byte("\n"))
}

// writeJSONIn writes v as JSON in media (writeRawIn).
func writeJSONIn(w http.ResponseWriter, media mediaType, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(apierrors.NewInternalError(err).Status())
		code, media = http.StatusInternalServerError, mediaJSON
	}
	writeRawIn(w, media, code, data)
}

func write(w http.ResponseWriter, code int, contentType string, data []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// readAll reads the request body within the size limit.
func readAll(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apierrors.NewRequestEntityTooLarge("limit is " + itoa(mbe.Limit))
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to read the request body: %v", err))
	}
	return data, nil
}

// readBody reads a request body in any encoding the server reads (JSON,
// YAML, protobuf; readContentType) and returns it as JSON. kind is what the
// endpoint expects, for the messages of a body that does not decode.
func readBody(r *http.Request, kind string) ([]byte, error) {
	b, err := readBodyAs(r, kind)
	return b.json, err
}

// body is a request body read: its JSON, and the media type it came in
// with what was sent, for the checks that need the original (a YAML body's
// duplicate keys).
type body struct {
	json     []byte
	media    mediaType
	original []byte
}

// readBodyAs is readBody that also returns how the body came.
func readBodyAs(r *http.Request, kind string) (body, error) {
	media, err := readContentType(r)
	if err != nil {
		return body{}, err
	}
	data, err := readAll(r)
	if err != nil {
		return body{}, err
	}
	b := body{json: data, media: media, original: data}
	switch media {
	case mediaYAML:
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return body{}, apierrors.NewBadRequest(fmt.Sprintf("error converting YAML to JSON: %v", err))
		}
		b.json = j
	case mediaProtobuf:
		if len(data) == 0 {
			return b, nil // an empty body, reported as for JSON
		}
		j, tm, err := protobuf.Decode(data)
		if err != nil {
			return body{}, protobufError(kind, tm, err, data)
		}
		b.json = j
	}
	return b, nil
}

// yamlOriginal is the body as sent when it was YAML, else nil.
func (b body) yamlOriginal() []byte {
	if b.media == mediaYAML {
		return b.original
	}
	return nil
}

// protobufError is kube-apiserver's 400 for a body that does not decode
// (transformDecodeError): naming the type the envelope gives when it could
// be read, else quoting the body's start.
func protobufError(kind string, tm api.TypeMeta, err error, body []byte) error {
	if tm.Kind != "" {
		version := tm.APIVersion[strings.LastIndexByte(tm.APIVersion, '/')+1:]
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", tm.Kind, version, kind, err))
	}
	summary := hex.EncodeToString(body[:min(len(body), 30)])
	if len(body) > 30 {
		summary += " ..."
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summary))
}

// decodeBody reads the request body and decodes it into obj (see
// decodeInto), then answers the request's fieldValidation for it: the
// bodies of subresources (a Scale, a Binding, an Eviction...) and reviews
// are checked against Kubernetes' type of kind, as kube-apiserver checks
// them.
func decodeBody(r *http.Request, obj any, gv, kind string) error {
	b, err := readBodyAs(r, kind)
	if err != nil {
		return err
	}
	if err := decodeInto(b.json, obj, gv, kind); err != nil {
		return err
	}
	directive := r.URL.Query().Get("fieldValidation")
	if b.media == mediaProtobuf || !fieldvalidation.Checks(directive) || !slices.Contains(fieldvalidation.Supported, directive) {
		return nil
	}
	group, version, found := strings.Cut(gv, "/")
	if !found {
		group, version = "", gv
	}
	errs := fieldvalidation.YAML(b.yamlOriginal())
	more, err := fieldvalidation.Typed(group, version, kind, b.json)
	if err != nil {
		return nil // a kind kube has no type of: nothing to hold it to
	}
	return fieldvalidation.Answer(r.Context(), directive, append(errs, more...), fieldvalidation.BodyRefusal(kind, version))
}

// decodeInto decodes a request body into obj, checking that the body's kind
// and apiVersion, when given, are the resource's. Unknown fields are ignored,
// as Kubernetes does by default, and field names match case-sensitively, as
// in Kubernetes' decoder (fieldvalidation.Decode).
func decodeInto(data []byte, obj any, gv, kind string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return apierrors.NewBadRequest("the request body is empty: expected a " + kind + " object")
	}
	// One pass when the body decodes: obj's own TypeMeta then holds the
	// body's kind and apiVersion. Errors take the two-pass path below, so
	// a wrong kind or apiVersion is reported before a field's decode error.
	if typed, ok := obj.(interface{ GetTypeMeta() *api.TypeMeta }); ok && *typed.GetTypeMeta() == (api.TypeMeta{}) {
		if fieldvalidation.Decode(data, obj) == nil {
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
	if err := fieldvalidation.Decode(data, obj); err != nil {
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
