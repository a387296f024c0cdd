package fields

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	pod := Set{"metadata.name": "web-1", "metadata.namespace": "default", "spec.nodeName": "node-1", "status.phase": "Running"}
	tests := []struct {
		sel     string
		str     string
		matches []Set
		misses  []Set
	}{
		{sel: "", str: "", matches: []Set{nil, pod}},
		{sel: "spec.nodeName=node-1", str: "spec.nodeName=node-1", matches: []Set{pod}, misses: []Set{{"spec.nodeName": "node-2"}, nil}},
		{sel: "spec.nodeName==node-1", str: "spec.nodeName=node-1", matches: []Set{pod}},
		{sel: "spec.nodeName=", str: "spec.nodeName=", matches: []Set{{"spec.nodeName": ""}, nil}, misses: []Set{pod}},
		{sel: "status.phase!=Succeeded,spec.nodeName=node-1", str: "spec.nodeName=node-1,status.phase!=Succeeded", matches: []Set{pod}, misses: []Set{{"spec.nodeName": "node-1", "status.phase": "Succeeded"}}},
		{sel: "status.phase!=Running", str: "status.phase!=Running", matches: []Set{nil}, misses: []Set{pod}},
		{sel: `metadata.name=a\,b\=c\\d`, str: `metadata.name=a\,b\=c\\d`, matches: []Set{{"metadata.name": `a,b=c\d`}}},
		{sel: "a=b,,", str: "a=b", matches: []Set{{"a": "b"}}},
		{sel: "a==b=", str: "", matches: nil},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.sel)
			if tt.sel == "a==b=" {
				if err == nil || err.Error() != "invalid field selector: unescaped character in value: 61" {
					t.Fatalf("Parse(%q) error = %v", tt.sel, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.sel, err)
			}
			if s.String() != tt.str {
				t.Errorf("String() = %q, want %q", s.String(), tt.str)
			}
			for _, f := range tt.matches {
				if !s.Matches(f) {
					t.Errorf("should match %v", f)
				}
			}
			for _, f := range tt.misses {
				if s.Matches(f) {
					t.Errorf("should not match %v", f)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sel, want string
		escape    bool
	}{
		{"x", "invalid selector: 'x'; can't understand 'x'", false},
		{"a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'", false},
		{`a=b\`, `invalid field selector: invalid escape sequence: \`, true},
		{`a=b\x`, `invalid field selector: invalid escape sequence: \x`, true},
		{"a=b=c", "invalid field selector: unescaped character in value: 61", true},
	}
	for _, tt := range tests {
		_, err := Parse(tt.sel)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) error = %v, want %q", tt.sel, err, tt.want)
			continue
		}
		if errors.Is(err, ErrInvalidSelector) != tt.escape {
			t.Errorf("Parse(%q): errors.Is(ErrInvalidSelector) = %v", tt.sel, !tt.escape)
		}
	}
}

func TestRequiresExactMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sel, field, value string
		found             bool
	}{
		{"spec.nodeName=n1", "spec.nodeName", "n1", true},
		{"metadata.name=x,spec.nodeName==n1", "spec.nodeName", "n1", true},
		{"spec.nodeName=", "spec.nodeName", "", true},
		{"spec.nodeName!=n1", "spec.nodeName", "", false},
		{"", "spec.nodeName", "", false},
	}
	for _, tt := range tests {
		s, err := Parse(tt.sel)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := s.RequiresExactMatch(tt.field)
		if v != tt.value || ok != tt.found {
			t.Errorf("%q RequiresExactMatch(%q) = %q,%v want %q,%v", tt.sel, tt.field, v, ok, tt.value, tt.found)
		}
	}
	if v, ok := OneTermEqualSelector("spec.nodeName", "n2").RequiresExactMatch("spec.nodeName"); !ok || v != "n2" {
		t.Errorf("OneTermEqualSelector: %q %v", v, ok)
	}
}

func TestTransformAndHelpers(t *testing.T) {
	t.Parallel()
	s, err := ParseAndTransform("host=n1,drop=me", func(f, v string) (string, string, error) {
		switch f {
		case "host":
			return "spec.nodeName", v, nil
		case "drop":
			return "", "", nil
		}
		return f, v, nil
	})
	if err != nil || s.String() != "spec.nodeName=n1" {
		t.Fatalf("ParseAndTransform = %v, %v", s, err)
	}
	wantErr := errors.New("field label not supported: bogus")
	if _, err := ParseAndTransform("bogus=1", func(f, v string) (string, string, error) { return "", "", wantErr }); !errors.Is(err, wantErr) {
		t.Errorf("transform error lost: %v", err)
	}
	if Nothing().Matches(Set{}) || Nothing().Empty() || !Everything().Empty() || !Everything().Matches(nil) {
		t.Error("Nothing/Everything wrong")
	}
	and := AndSelectors(OneTermEqualSelector("a", "1"), OneTermNotEqualSelector("b", "2"))
	if and.String() != "a=1,b!=2" || !and.Matches(Set{"a": "1"}) || and.Matches(Set{"a": "1", "b": "2"}) {
		t.Errorf("AndSelectors: %q", and)
	}
	if AndSelectors(Everything(), Nothing()).Matches(nil) {
		t.Error("AndSelectors with Nothing matched")
	}
	if got := (Set{"b": "2", "a": "1"}).AsSelector().String(); got != "a=1,b=2" {
		t.Errorf("Set selector String = %q", got)
	}
	if got := len(mustParse(t, "a=1,b!=2").Requirements()); got != 2 {
		t.Errorf("Requirements: %d", got)
	}
	for _, v := range []string{"", "plain", `a,b=c\d`, `\\\,`} {
		u, err := UnescapeValue(EscapeValue(v))
		if err != nil || u != v {
			t.Errorf("escape round trip of %q: %q, %v", v, u, err)
		}
	}
}

func mustParse(t *testing.T, s string) Selector {
	t.Helper()
	sel, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a=b", `a=b\,c`, "a!=b,c==d", `\`, "=,=", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(sel.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok but String %q fails: %v", s, sel.String(), err)
		}
		// Terms are ordered by their text, which String may change ("==" is
		// printed as "="), so compare them as sets.
		if a, b := sortedTerms(again), sortedTerms(sel); a != b {
			t.Fatalf("round trip %q: %v != %v", s, a, b)
		}
	})
}

func sortedTerms(s Selector) string {
	rs := s.Requirements()
	terms := make([]string, len(rs))
	for i, r := range rs {
		terms[i] = fmt.Sprintf("%q%s%q", r.Field, r.Operator, r.Value)
	}
	sort.Strings(terms)
	return strings.Join(terms, ",")
}

var sink bool

func BenchmarkMatches(b *testing.B) {
	s := mustParseB(b, "spec.nodeName=node-1,status.phase!=Succeeded")
	f := Set{"metadata.name": "web-1", "metadata.namespace": "default", "spec.nodeName": "node-1", "status.phase": "Running"}
	b.ReportAllocs()
	for b.Loop() {
		sink = s.Matches(f)
	}
}

func mustParseB(b *testing.B, s string) Selector {
	sel, err := Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return sel
}
