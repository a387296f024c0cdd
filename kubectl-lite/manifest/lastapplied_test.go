package manifest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestWithLastApplied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		// want is the annotation's value: the manifest as kubectl records
		// it, with an (empty) annotations map and without an older
		// last-applied, plus a newline.
		want string
	}{
		{"no annotations", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"n":1}}`,
			`{"apiVersion":"v1","data":{"n":1},"kind":"ConfigMap","metadata":{"annotations":{},"name":"a"}}` + "\n"},
		{"no metadata", `{"kind":"Namespace"}`,
			`{"kind":"Namespace","metadata":{"annotations":{}}}` + "\n"},
		{"an older last-applied is not nested", `{"kind":"ConfigMap","metadata":{"name":"a","annotations":{"x":"y","kubectl.kubernetes.io/last-applied-configuration":"old"}}}`,
			`{"kind":"ConfigMap","metadata":{"annotations":{"x":"y"},"name":"a"}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var obj map[string]any
			dec := json.NewDecoder(bytes.NewReader([]byte(tt.in)))
			dec.UseNumber()
			if err := dec.Decode(&obj); err != nil {
				t.Fatal(err)
			}
			b, err := WithLastApplied(obj)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if la := got.Metadata.Annotations[api.LastAppliedConfigAnnotation]; la != tt.want {
				t.Errorf("last-applied = %s, want %s", la, tt.want)
			}
			if again, _ := json.Marshal(obj); string(again) != string(mustCompact(t, tt.in)) {
				t.Errorf("the input object changed: %s", again)
			}
		})
	}
}

func mustCompact(t *testing.T, s string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	return b
}
