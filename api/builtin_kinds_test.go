package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// TestBuiltinKindsFieldParity: the kinds added for issue 25 have exactly
// the fields of k8s.io/api v0.37.2 — the same JSON paths, each a list,
// map or value on both sides (the metadata is ObjectMeta's, checked
// elsewhere) — and a fully filled object of ours is read by Kubernetes'
// type with no unknown field and written back the same.
func TestBuiltinKindsFieldParity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ours, theirs any
	}{
		{filled[Ingress](), &networkingv1.Ingress{}},
		{filled[IngressClass](), &networkingv1.IngressClass{}},
		{filled[NetworkPolicy](), &networkingv1.NetworkPolicy{}},
		{filled[PriorityClass](), &schedulingv1.PriorityClass{}},
		{filled[RuntimeClass](), &nodev1.RuntimeClass{}},
		{filled[FlowSchema](), &flowcontrolv1.FlowSchema{}},
		{filled[PriorityLevelConfiguration](), &flowcontrolv1.PriorityLevelConfiguration{}},
		{filled[MutatingAdmissionPolicy](), &admissionregistrationv1.MutatingAdmissionPolicy{}},
		{filled[MutatingAdmissionPolicyBinding](), &admissionregistrationv1.MutatingAdmissionPolicyBinding{}},
		{filled[ClusterTrustBundle](), &certificatesv1.ClusterTrustBundle{}},
		{filled[ComponentStatus](), &corev1.ComponentStatus{}},
	}
	for _, tc := range tests {
		name := reflect.TypeOf(tc.ours).Elem().Name()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ourPaths := jsonPaths(reflect.TypeOf(tc.ours).Elem(), "", nil)
			theirPaths := jsonPaths(reflect.TypeOf(tc.theirs).Elem(), "", nil)
			for _, p := range theirPaths {
				if !slices.Contains(ourPaths, p) {
					t.Errorf("k8s.io/api has %s, ours does not", p)
				}
			}
			for _, p := range ourPaths {
				if !slices.Contains(theirPaths, p) {
					t.Errorf("ours has %s, k8s.io/api does not", p)
				}
			}
			data, err := json.Marshal(tc.ours)
			if err != nil {
				t.Fatal(err)
			}
			if err := strictDecode(data, tc.theirs); err != nil {
				t.Fatalf("Kubernetes' %T rejects our JSON: %v\n%s", tc.theirs, err, data)
			}
			back, err := json.Marshal(tc.theirs)
			if err != nil {
				t.Fatal(err)
			}
			again := reflect.New(reflect.TypeOf(tc.ours).Elem()).Interface()
			if err := strictDecode(back, again); err != nil {
				t.Fatalf("our type rejects Kubernetes' JSON: %v\n%s", err, back)
			}
			if data2, _ := json.Marshal(again); string(data2) != string(data) {
				t.Errorf("round trip through Kubernetes changed the object:\nours:  %s\nafter: %s", data, data2)
			}
		})
	}
}

// jsonPaths lists the JSON paths of a type's fields ("spec.rules[].host"),
// each with its shape; a struct with custom JSON (times, quantities,
// int-or-strings) and the object metadata are leaves.
func jsonPaths(t reflect.Type, prefix string, seen []reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return []string{prefix + ":bytes"}
		}
		return jsonPaths(t.Elem(), prefix+"[]", seen)
	case reflect.Map:
		return jsonPaths(t.Elem(), prefix+"{}", seen)
	case reflect.Struct:
	default:
		return []string{prefix + ":" + t.Kind().String()}
	}
	if _, custom := reflect.New(t).Interface().(json.Marshaler); custom || strings.HasSuffix(t.Name(), "ObjectMeta") || slices.Contains(seen, t) {
		return []string{prefix + ":" + t.Name()}
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		p := prefix
		if name != "" || !f.Anonymous {
			if p != "" {
				p += "."
			}
			p += name
		}
		out = append(out, jsonPaths(f.Type, p, append(seen, t))...)
	}
	return out
}
