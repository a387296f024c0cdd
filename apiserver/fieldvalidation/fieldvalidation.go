package fieldvalidation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// The directives of fieldValidation.
const (
	Ignore = "Ignore"
	Warn   = "Warn"
	Strict = "Strict"
)

// Supported are the values fieldValidation may take, in the order
// kube-apiserver's refusal lists them ("" is Warn).
var Supported = []string{"", Ignore, Strict, Warn}

// Checks tells whether directive asks for the fields to be checked:
// Strict and Warn, which an absent fieldValidation ("") means.
func Checks(directive string) bool { return directive != Ignore }

// Message is the text of a Strict refusal: kube's strict decoding error.
func Message(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return "strict decoding error: " + strings.Join(msgs, ", ")
}

// The beginnings of a YAML strict error, whose lines kube-apiserver sends
// as one warning each.
const (
	yamlShortPrefix = "yaml: unmarshal errors:\n"
	yamlLongPrefix  = "error converting YAML to JSON: yaml: unmarshal errors:\n"
)

// Warnings are the Warning header texts of errs: one per error, and one
// per line of a YAML error.
func Warnings(errs []error) []string {
	var out []string
	for _, e := range errs {
		s := e.Error()
		rest, ok := strings.CutPrefix(s, yamlShortPrefix)
		if !ok {
			rest, ok = strings.CutPrefix(s, yamlLongPrefix)
		}
		if !ok {
			out = append(out, s)
			continue
		}
		for _, line := range strings.Split(rest, "\n") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// YAML returns the duplicate keys of a YAML body as kube's strict YAML
// decoding reports them (one error listing every line), or nil.
func YAML(body []byte) []error {
	if body == nil {
		return nil
	}
	if _, err := yaml.YAMLToJSONStrict(body); err != nil {
		return []error{err}
	}
	return nil
}

// ApplyPatch returns the strict error of an apply configuration (YAML or
// JSON), as kube-apiserver reports it after the apply: "error converting
// YAML to JSON: yaml: unmarshal errors: ..." for duplicate keys; nil when
// there is none.
func ApplyPatch(patch []byte) error {
	return yaml.UnmarshalStrict(patch, &map[string]any{})
}

// kubeScheme knows Kubernetes' Go type of every built-in kind.
var kubeScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("fieldvalidation: %v", err))
		}
	}
	return s
})

// ErrNoType is returned for a kind Kubernetes has no Go type of.
var ErrNoType = errors.New("no Kubernetes type")

func newTyped(group, version, kind string) (runtime.Object, error) {
	obj, err := kubeScheme().New(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	if err != nil {
		return nil, fmt.Errorf("%w for %s/%s, Kind=%s", ErrNoType, group, version, kind)
	}
	return obj, nil
}

// Typed returns the unknown and duplicate fields of a JSON object of the
// built-in kind group/version/kind, in the order kube's strict decoder
// meets them. A body that does not decode at all gives no strict errors:
// its decode error is reported elsewhere.
func Typed(group, version, kind string, body []byte) ([]error, error) {
	obj, err := newTyped(group, version, kind)
	if err != nil {
		return nil, err
	}
	errs, err := kjson.UnmarshalStrict(body, obj)
	if err != nil {
		return nil, nil
	}
	return errs, nil
}

// TypedPatched returns the unknown fields of the object a JSON or merge
// patch made (JSON): kube-apiserver patches and re-encodes through Go
// maps, so it meets the fields in sorted order, which this decoding
// reproduces.
func TypedPatched(group, version, kind string, patched []byte) ([]error, error) {
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, &m); err != nil {
		return nil, nil
	}
	sorted, err := json.Marshal(m)
	if err != nil {
		return nil, nil
	}
	return Typed(group, version, kind, sorted)
}

// TypedMap returns the unknown fields of an object in unstructured form,
// as kube-apiserver reports them after a strategic merge patch: sorted.
func TypedMap(group, version, kind string, obj map[string]any) ([]error, error) {
	typed, err := newTyped(group, version, kind)
	if err != nil {
		return nil, err
	}
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, typed, true)
	if se, ok := runtime.AsStrictDecodingError(err); ok {
		return se.Errors(), nil
	}
	return nil, nil
}

// Object decodes a JSON object as kube-apiserver decodes one into
// unstructured form (integers kept as int64) and returns its duplicate
// fields; err is a body that is not a JSON object.
func Object(body []byte) (map[string]any, []error, error) {
	var m map[string]any
	errs, err := kjson.UnmarshalStrict(body, &m)
	return m, errs, err
}

// jsonPatchOperation is the shape kube-apiserver holds a JSON patch's
// operations to: other members are unknown fields.
type jsonPatchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// JSONPatch returns the unknown and duplicate members of a JSON patch's
// operations ("json patch unknown field \"[0].extra\""); err is a patch
// that does not decode as a list of operations.
func JSONPatch(patch []byte) ([]error, error) {
	var ops []jsonPatchOperation
	errs, err := kjson.UnmarshalStrict(patch, &ops)
	if err != nil {
		return nil, err
	}
	for i, e := range errs {
		errs[i] = fmt.Errorf("json patch %w", e)
	}
	return errs, nil
}

// BodyRefusal is kube-apiserver's Strict refusal of a create or update
// body of kind in version: 400 "Deployment in version "v1" cannot be
// handled as a Deployment: strict decoding error: ...".
func BodyRefusal(kind, version string) func(message string) error {
	return func(message string) error {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, version, kind, message))
	}
}

// Answer does what directive asks with errs: Strict refuses the request
// with refuse(Message(errs)), Warn (or "") adds a Warning header per
// error (Warnings), Ignore does nothing.
func Answer(ctx context.Context, directive string, errs []error, refuse func(message string) error) error {
	if len(errs) == 0 {
		return nil
	}
	switch directive {
	case Ignore:
		return nil
	case Strict:
		return refuse(Message(errs))
	}
	for _, w := range Warnings(errs) {
		warning.Add(ctx, w)
	}
	return nil
}

// Decode decodes a JSON body (or a patch's result) into v as
// kube-apiserver's decoder does: a key must match a field's JSON name
// exactly, so "Replicas" is not spec.replicas but an unknown field,
// dropped here (the checks above report it: Strict refuses it), where
// encoding/json would match it case-insensitively and store it; numbers in
// untyped values stay integers when they are.
func Decode(data []byte, v any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(data, v)
}
