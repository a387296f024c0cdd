package labels

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestParseAndMatch(t *testing.T) {
	t.Parallel()
	web := Set{"app": "web", "tier": "frontend", "env": "prod"}
	tests := []struct {
		sel     string
		str     string // canonical String(); "" when same as sel
		matches []Set
		misses  []Set
	}{
		{sel: "", matches: []Set{nil, web}},
		{sel: "app=web", matches: []Set{web}, misses: []Set{{"app": "db"}, nil}},
		{sel: "app==web", matches: []Set{web}},
		{sel: "app!=web", matches: []Set{{"app": "db"}, nil}, misses: []Set{web}},
		{sel: "env in (prod,staging)", matches: []Set{web, {"env": "staging"}}, misses: []Set{{"env": "dev"}, nil}},
		{sel: "env notin (prod)", matches: []Set{{"env": "dev"}, nil}, misses: []Set{web}},
		{sel: "app", matches: []Set{web}, misses: []Set{{"x": "y"}}},
		{sel: "!canary", matches: []Set{web}, misses: []Set{{"canary": ""}}},
		{sel: "app=web,tier=frontend", matches: []Set{web}, misses: []Set{{"app": "web"}}},
		{sel: "  app = web ,  tier  in ( frontend , backend )  ", str: "app=web,tier in (backend,frontend)", matches: []Set{web}},
		{sel: "tier=frontend,app=web", str: "app=web,tier=frontend", matches: []Set{web}},
		{sel: "x in (foo,,baz),y,z notin ()", str: "x in (,baz,foo),y,z notin ()", matches: []Set{{"x": "", "y": "1"}}, misses: []Set{{"x": "foo", "y": "1", "z": ""}}},
		{sel: "a=", matches: []Set{{"a": ""}}, misses: []Set{{"a": "b"}, nil}},
		{sel: "a in (in,notin)", str: "a in (in,notin)", matches: []Set{{"a": "in"}}},
		{sel: "example.com/role=db", matches: []Set{{"example.com/role": "db"}}},
		{sel: "n>5", matches: []Set{{"n": "6"}}, misses: []Set{{"n": "5"}, {"n": "x"}, nil}},
		{sel: "n<5", matches: []Set{{"n": "-1"}}, misses: []Set{{"n": "5"}}},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.sel)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.sel, err)
			}
			want := tt.str
			if want == "" {
				want = strings.TrimSpace(tt.sel)
			}
			if got := s.String(); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			for _, ls := range tt.matches {
				if !s.Matches(ls) {
					t.Errorf("%q should match %v", tt.sel, ls)
				}
			}
			for _, ls := range tt.misses {
				if s.Matches(ls) {
					t.Errorf("%q should not match %v", tt.sel, ls)
				}
			}
			// The canonical form parses back to itself.
			again, err := Parse(s.String())
			if err != nil || again.String() != s.String() {
				t.Errorf("round trip of %q: %v %v", s.String(), again, err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ sel, want string }{
		{"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
		{"a=b,", "found '', expected: identifier after ','"},
		{",a", "found ',', expected: !, identifier, or 'end of string'"},
		{"a=b c", "found 'c', expected: ',' or 'end of string'"},
		{"a in b", "unable to parse requirement: found 'b' expected: '('"},
		{"a in (b", "unable to parse requirement: found '', expected: ',' or ')'"},
		{"a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"},
		{"a=(b)", "unable to parse requirement: found '(', expected: identifier"},
		{"!", "unable to parse requirement: found '', expected: identifier"},
		{"a=b=c", "found '=', expected: ',' or 'end of string'"},
		{"A/b=c", `unable to parse requirement: <nil>: Invalid value: "A/b": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"a=b-", `unable to parse requirement: values[0][a]: Invalid value: "b-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"a=b\x00,c", `unable to parse requirement: values[0][a]: Invalid value: "b\x00": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"n>x", `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.sel)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want error %q", tt.sel, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q) error\n got  %q\n want %q", tt.sel, err.Error(), tt.want)
			}
		})
	}
}

func TestNewRequirementErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		op   Operator
		vals []string
		want string
	}{
		{"a", OpIn, nil, "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"},
		{"a", OpEquals, []string{"x", "y"}, "values: Invalid value: [x y]: exact-match compatibility requires one single value"},
		{"a", OpExists, []string{"x"}, "values: Invalid value: [x]: values set must be empty for exists and does not exist"},
		{"a", Operator("like"), nil, `operator: Unsupported value: "like": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"`},
		{"", OpExists, nil, `key: Invalid value: "": name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"a b", OpIn, nil, `[key: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty]`},
	}
	for _, tt := range tests {
		_, err := NewRequirement(tt.key, tt.op, tt.vals)
		if err == nil || err.Error() != tt.want {
			t.Errorf("NewRequirement(%q, %q, %q) error\n got  %v\n want %q", tt.key, tt.op, tt.vals, err, tt.want)
		}
	}
}

func TestRequiresExactMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sel, label, value string
		found             bool
	}{
		{"app=web", "app", "web", true},
		{"app==web,x", "app", "web", true},
		{"app in (web)", "app", "web", true},
		{"app in (web,db)", "app", "", false},
		{"app!=web", "app", "", false},
		{"x=y", "app", "", false},
	}
	for _, tt := range tests {
		s, err := Parse(tt.sel)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := s.RequiresExactMatch(tt.label)
		if v != tt.value || ok != tt.found {
			t.Errorf("%q RequiresExactMatch(%q) = %q,%v want %q,%v", tt.sel, tt.label, v, ok, tt.value, tt.found)
		}
	}
}

func TestSelectorFromLabelSelector(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ls      *api.LabelSelector
		str     string
		nothing bool
		empty   bool
		err     string
		matches Set
		misses  Set
	}{
		{name: "nil selects nothing", ls: nil, nothing: true, misses: Set{}},
		{name: "empty selects everything", ls: &api.LabelSelector{}, empty: true, matches: Set{"a": "b"}},
		{
			name: "labels and expressions",
			ls: &api.LabelSelector{
				MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []api.LabelSelectorRequirement{
					{Key: "env", Operator: "In", Values: []string{"prod", "dev"}},
					{Key: "tier", Operator: "NotIn", Values: []string{"db"}},
					{Key: "track", Operator: "Exists"},
					{Key: "canary", Operator: "DoesNotExist"},
				},
			},
			str:     "app=web,!canary,env in (dev,prod),tier notin (db),track",
			matches: Set{"app": "web", "env": "dev", "track": "x"},
			misses:  Set{"app": "web", "env": "dev", "track": "x", "canary": "1"},
		},
		{name: "bad operator", ls: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "Gt", Values: []string{"1"}}}}, err: `"Gt" is not a valid label selector operator`},
		{name: "in without values", ls: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "a", Operator: "In"}}}, err: "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"},
		{name: "bad label value", ls: &api.LabelSelector{MatchLabels: map[string]string{"a": "-x"}}, err: `values[0][a]: Invalid value: "-x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := SelectorFromLabelSelector(tt.ls)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if MatchesNothing(s) != tt.nothing || s.Empty() != tt.empty {
				t.Errorf("nothing=%v empty=%v, want %v %v", MatchesNothing(s), s.Empty(), tt.nothing, tt.empty)
			}
			if tt.str != "" && s.String() != tt.str {
				t.Errorf("String() = %q, want %q", s.String(), tt.str)
			}
			if tt.matches != nil && !s.Matches(tt.matches) {
				t.Errorf("should match %v", tt.matches)
			}
			if tt.misses != nil && s.Matches(tt.misses) {
				t.Errorf("should not match %v", tt.misses)
			}
		})
	}
}

func TestSetHelpers(t *testing.T) {
	t.Parallel()
	a := Set{"b": "2", "a": "1"}
	if got := a.String(); got != "a=1,b=2" {
		t.Errorf("String() = %q", got)
	}
	if FormatLabels(nil) != "<none>" || FormatLabels(a) != "a=1,b=2" {
		t.Errorf("FormatLabels: %q %q", FormatLabels(nil), FormatLabels(a))
	}
	if !Conflicts(a, Set{"a": "9"}) || Conflicts(a, Set{"a": "1", "c": "3"}) {
		t.Error("Conflicts wrong")
	}
	m := Merge(a, Set{"a": "9", "c": "3"})
	if !Equals(m, Set{"a": "9", "b": "2", "c": "3"}) || a["a"] != "1" {
		t.Errorf("Merge = %v (input %v)", m, a)
	}
	s := SelectorFromSet(a)
	if s.String() != "a=1,b=2" || !s.Matches(Set{"a": "1", "b": "2", "x": "y"}) || s.Matches(Set{"a": "1"}) {
		t.Errorf("SelectorFromSet: %q", s)
	}
	if !SelectorFromSet(nil).Empty() {
		t.Error("SelectorFromSet(nil) should be empty")
	}
	if _, err := ValidatedSelectorFromSet(Set{"a": "b c"}); err == nil {
		t.Error("ValidatedSelectorFromSet accepted an invalid value")
	}
	added := Everything().Add(Requirement{key: "z", operator: OpExists}, Requirement{key: "a", operator: OpExists})
	if added.String() != "a,z" {
		t.Errorf("Add: %q", added)
	}
	m2, err := LabelSelectorAsMap(&api.LabelSelector{MatchLabels: map[string]string{"a": "1"}, MatchExpressions: []api.LabelSelectorRequirement{{Key: "b", Operator: "In", Values: []string{"2"}}}})
	if err != nil || !Equals(m2, Set{"a": "1", "b": "2"}) {
		t.Errorf("LabelSelectorAsMap = %v, %v", m2, err)
	}
	if _, err := LabelSelectorAsMap(&api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "b", Operator: "Exists"}}}); err == nil {
		t.Error("LabelSelectorAsMap accepted Exists")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a=b", "x in (a,,b),!y", "a!=", "((", "a in (in", "!!a", "a=b,c notin (d)", "=", "a >"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := Parse(s)
		if err != nil {
			return
		}
		// Anything that parses renders to a string that parses to the same selector.
		again, err := Parse(sel.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q fails: %v", s, sel.String(), err)
		}
		if again.String() != sel.String() {
			t.Fatalf("round trip %q -> %q -> %q", s, sel.String(), again.String())
		}
	})
}

var benchSink bool

func BenchmarkMatches(b *testing.B) {
	ls := Set{"app": "web", "pod-template-hash": "5d59d67564", "tier": "frontend", "env": "prod", "team": "payments"}
	for _, sel := range []string{"app=web,pod-template-hash=5d59d67564", "env in (prod,staging),tier!=db,!canary", "app=db"} {
		s, err := Parse(sel)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sel, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchSink = s.Matches(ls)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("app=web,env in (prod,staging),!canary"); err != nil {
			b.Fatal(err)
		}
	}
}
