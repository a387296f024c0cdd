package fieldvalidation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/minik8s/minik8s/apiserver/warning"
)

func texts(errs []error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// TestTyped: a built-in kind's unknown and duplicate fields in the order
// kube-apiserver's strict decoder meets them (the cases'
// answers are kube-apiserver v1.37's, see TestFieldValidationTypedAsKube).
func TestTyped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, group, version, kind, body string
		want                             []string
	}{
		{"unknown then duplicate", "apps", "v1", "Deployment",
			`{"spec": {"unknownField": "foo", "replicas": 2, "replicas": 3}}`,
			[]string{`unknown field "spec.unknownField"`, `duplicate field "spec.replicas"`}},
		{"metadata", "apps", "v1", "Deployment", `{"metadata": {"name": "a", "unknownMeta": 1}}`,
			[]string{`unknown field "metadata.unknownMeta"`}},
		{"case sensitive, lists", "", "v1", "Pod",
			`{"spec": {"Containers": [], "containers": [{"name": "c", "nope": 1}]}}`,
			[]string{`unknown field "spec.Containers"`, `unknown field "spec.containers[0].nope"`}},
		{"known fields our types may lack", "", "v1", "Pod",
			`{"spec": {"containers": [{"name": "c", "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]}]}}`, nil},
		{"core group", "", "v1", "ConfigMap", `{"data": {"a": "b"}, "binaryData": {}, "immutable": true}`, nil},
		{"apiextensions", "apiextensions.k8s.io", "v1", "CustomResourceDefinition", `{"spec": {"bogus": 1}}`,
			[]string{`unknown field "spec.bogus"`}},
		{"not an object: no strict errors", "apps", "v1", "Deployment", `[1]`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs, err := Typed(tc.group, tc.version, tc.kind, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(errs); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := Typed("example.com", "v1", "Widget", []byte(`{}`)); !errors.Is(err, ErrNoType) {
		t.Errorf("a kind without a Kubernetes type: %v, want ErrNoType", err)
	}
}

// TestPatches: the strict errors of the patch forms, worded as kube's.
func TestPatches(t *testing.T) {
	t.Parallel()
	errs, err := JSONPatch([]byte(`[{"op": "add", "path": "/a", "value": 1, "op": "add", "extra": 2}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(errs), []string{`json patch duplicate field "[0].op"`, `json patch unknown field "[0].extra"`}; !slices.Equal(got, want) {
		t.Errorf("JSON patch: got %q, want %q", got, want)
	}
	if _, err := JSONPatch([]byte(`{}`)); err == nil {
		t.Error("a JSON patch that is not a list was accepted")
	}
	// A patched object is met in sorted order, as kube re-encodes it.
	errs, _ = TypedPatched("apps", "v1", "Deployment", []byte(`{"spec": {"zz": 1, "aa": 2}, "metadata": {"mm": 3}}`))
	if got, want := texts(errs), []string{`unknown field "metadata.mm"`, `unknown field "spec.aa"`, `unknown field "spec.zz"`}; !slices.Equal(got, want) {
		t.Errorf("patched object: got %q, want %q", got, want)
	}
	m, errs, err := Object([]byte(`{"spec": {"paused": true, "paused": false, "n": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(errs), []string{`duplicate field "spec.paused"`}; !slices.Equal(got, want) {
		t.Errorf("merge patch: got %q, want %q", got, want)
	}
	if got, want := fmt.Sprintf("%+v", m), "map[spec:map[n:1 paused:false]]"; got != want {
		t.Errorf("the patch as kube quotes it: %s, want %s", got, want)
	}
	errs, _ = TypedMap("apps", "v1", "Deployment", m)
	if got, want := texts(errs), []string{`unknown field "spec.n"`}; !slices.Equal(got, want) {
		t.Errorf("strategic merge patch result: got %q, want %q", got, want)
	}
	if err := ApplyPatch([]byte("a: 1\nb: 2\na: 3\n")); err == nil || err.Error() != "error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: key \"a\" already set in map" {
		t.Errorf("apply duplicate: %v", err)
	}
}

// TestAnswer: Strict refuses with every error, Warn (and "") sends a
// warning per error and per line of a YAML error, Ignore says nothing.
func TestAnswer(t *testing.T) {
	t.Parallel()
	errs := append(YAML([]byte("a: 1\na: 2\nb: 1\nb: 2\n")), errors.New(`unknown field "spec.x"`))
	refuse := func(msg string) error { return errors.New(msg) }
	for _, tc := range []struct {
		directive string
		err       string
		warnings  []string
	}{
		{Strict, "strict decoding error: yaml: unmarshal errors:\n  line 2: key \"a\" already set in map\n  line 4: key \"b\" already set in map, unknown field \"spec.x\"", nil},
		{Warn, "", []string{`299 - "line 2: key \"a\" already set in map"`, `299 - "line 4: key \"b\" already set in map"`, `299 - "unknown field \"spec.x\""`}},
		{"", "", []string{`299 - "line 2: key \"a\" already set in map"`, `299 - "line 4: key \"b\" already set in map"`, `299 - "unknown field \"spec.x\""`}},
		{Ignore, "", nil},
	} {
		h := http.Header{}
		err := Answer(warning.WithRecorder(context.Background(), h), tc.directive, errs, refuse)
		if got := fmt.Sprint(err); (err != nil || tc.err != "") && got != tc.err {
			t.Errorf("%q: error %q, want %q", tc.directive, got, tc.err)
		}
		if got := h.Values("Warning"); !slices.Equal(got, tc.warnings) {
			t.Errorf("%q: warnings %q, want %q", tc.directive, got, tc.warnings)
		}
	}
}

func BenchmarkTypedPod(b *testing.B) {
	body := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"app":"x"}},
"spec":{"containers":[{"name":"c","image":"busybox","command":["sleep","3600"],"resources":{"requests":{"cpu":"100m","memory":"64Mi"}},
"ports":[{"containerPort":80}],"env":[{"name":"A","value":"b"}]}],"restartPolicy":"Always"},"status":{}}`)
	for b.Loop() {
		if _, err := Typed("", "v1", "Pod", body); err != nil {
			b.Fatal(err)
		}
	}
}
