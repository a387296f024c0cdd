package labels

import (
	"strings"
	"testing"

	k8slabels "k8s.io/apimachinery/pkg/labels"
)

// TestAgainstKubernetes parses the same selectors with Kubernetes' own
// parser (test-only dependency) and requires the same canonical string, the
// same error text and the same matches. One deliberate difference is not
// in the corpus: Kubernetes' lexer stops at a NUL byte and ignores the rest
// of the selector; ours rejects the NUL (TestParseErrors).
func TestAgainstKubernetes(t *testing.T) {
	t.Parallel()
	selectors := []string{
		"", "a", "!a", "a=b", "a==b", "a!=b", "a=", "a!=", "a in (b,c)", "a notin (b)",
		"a in ()", "a in (,)", "a in (b,,c)", "x in (foo,,baz),y,z notin ()",
		" a = b , c in ( d , e ) ", "b=1,a=2", "a in (in,notin)", "in in (in)",
		"example.com/a=b", "a>1", "a<1", "a>x", "a b", "a=b,", ",a", "a=b c", "a in b",
		"a in (b", "a in (b c)", "a=(b)", "!", "!!a", "a=b=c", "A/b=c", "a=b-", "a/b/c",
		"a=" + strings.Repeat("x", 64), "a==", "a!", "a,", "a=b,,c", "(a)", "a in (b))",
		"a notin", "a=b,!c,d notin (e,f),g in (h)", "a\tin\t(b)", "a\n=\nb", "é=1",
		"a in (b,c,)", "a in (,b)", "a!==b", "a=!b", "a<>b", "a=b!",
	}
	labelSets := []Set{nil, {"a": "b"}, {"a": ""}, {"a": "2"}, {"a": "c", "c": "d"}, {"x": "", "y": "1"}, {"in": "in"}}
	for _, sel := range selectors {
		ours, ourErr := Parse(sel)
		theirs, theirErr := k8slabels.Parse(sel)
		if (ourErr == nil) != (theirErr == nil) {
			t.Errorf("Parse(%q): ours err=%v, Kubernetes err=%v", sel, ourErr, theirErr)
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
		for _, ls := range labelSets {
			if ours.Matches(ls) != theirs.Matches(k8slabels.Set(ls)) {
				t.Errorf("%q matches %v: ours %v, Kubernetes %v", sel, ls, ours.Matches(ls), !ours.Matches(ls))
			}
		}
	}
}
