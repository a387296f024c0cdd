package fields

import (
	"testing"

	k8sfields "k8s.io/apimachinery/pkg/fields"
)

// TestAgainstKubernetes parses the same field selectors with Kubernetes'
// own parser (test-only dependency) and requires the same error text, the
// same String, matches and exact-match answers.
func TestAgainstKubernetes(t *testing.T) {
	t.Parallel()
	selectors := []string{
		"", "a=b", "a==b", "a!=b", "a=", "a!=", "=b", "a", "a=b,c!=d", "c!=d,a=b", "a=b,,", ",",
		`a=b\,c`, `a=b\`, `a=b\x`, "a=b=c", "a==b=c", "a!==b", "a=!=b", " a = b ", `a\,b=c`,
		"spec.nodeName=n1,metadata.name=x", "a=é", `a=\é`, "a=b,a=c", "a=b,a!=b",
	}
	sets := []Set{nil, {"a": "b"}, {"a": ""}, {"a": "b,c"}, {"a": "b", "c": "d"}, {"c": "e"}, {" a ": " b "}}
	for _, sel := range selectors {
		ours, ourErr := Parse(sel)
		theirs, theirErr := k8sfields.ParseSelector(sel)
		if (ourErr == nil) != (theirErr == nil) {
			t.Errorf("Parse(%q): ours %v, Kubernetes %v", sel, ourErr, theirErr)
			continue
		}
		if ourErr != nil {
			if ourErr.Error() != theirErr.Error() {
				t.Errorf("Parse(%q) error\n ours %q\n k8s  %q", sel, ourErr, theirErr)
			}
			continue
		}
		if ours.String() != theirs.String() {
			t.Errorf("Parse(%q).String(): ours %q, Kubernetes %q", sel, ours, theirs)
		}
		if ours.Empty() != theirs.Empty() {
			t.Errorf("Parse(%q).Empty(): ours %v", sel, ours.Empty())
		}
		for _, s := range sets {
			if ours.Matches(s) != theirs.Matches(k8sfields.Set(s)) {
				t.Errorf("%q matches %v: ours %v", sel, s, ours.Matches(s))
			}
		}
		for _, f := range []string{"a", "c", "spec.nodeName"} {
			v1, ok1 := ours.RequiresExactMatch(f)
			v2, ok2 := theirs.RequiresExactMatch(f)
			if v1 != v2 || ok1 != ok2 {
				t.Errorf("%q RequiresExactMatch(%q): ours %q,%v Kubernetes %q,%v", sel, f, v1, ok1, v2, ok2)
			}
		}
	}
}
