package printers

import (
	"bytes"
	"strings"
	"testing"
)

func TestJSONPath(t *testing.T) {
	t.Parallel()
	pod := `{"metadata":{"name":"p","labels":{"app":"web"}},"spec":{"containers":[{"name":"a","image":"i1"},{"name":"b","image":"i2"}]},
		"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Initialized","status":"False"}],"restarts":3}}`
	tests := []struct{ tmpl, want string }{
		{"{.metadata.name}", "p"},
		{"{.spec.containers[*].image}", "i1 i2"},
		{"{.spec.containers[1].name}", "b"},
		{`{range .spec.containers[*]}{.name}={.image}{"\n"}{end}`, "a=i1\nb=i2\n"},
		{`{.status.conditions[?(@.type=="Ready")].status}`, "True"},
		{`{.status.conditions[?(@.status=="False")].type}`, "Initialized"},
		{"{.metadata.labels}", `{"app":"web"}`},
		{"{.status.restarts}", "3"},
		{"{.missing.field}", ""},
		{"{..image}", "i1 i2"},
	}
	for _, tt := range tests {
		j, err := JSONPath(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		var b bytes.Buffer
		if err := PrintJSONPath(&b, j, obj(t, pod)); err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		if b.String() != tt.want {
			t.Errorf("%s = %q, want %q", tt.tmpl, b.String(), tt.want)
		}
	}
	if _, err := JSONPath("{.metadata.name"); err == nil {
		t.Error("unclosed template parsed")
	}
}

func TestRelaxedJSONPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		".metadata.name": "{.metadata.name}", "metadata.name": "{.metadata.name}",
		"{.metadata.name}": "{.metadata.name}", "{metadata.name}": "{.metadata.name}",
	} {
		if got, err := RelaxedJSONPath(in); err != nil || got != want {
			t.Errorf("RelaxedJSONPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCustomColumns(t *testing.T) {
	t.Parallel()
	cols, err := ParseCustomColumns("NAME:.metadata.name,IMAGES:.spec.containers[*].image,NODE:spec.nodeName")
	if err != nil {
		t.Fatal(err)
	}
	items := []Obj{
		obj(t, `{"metadata":{"name":"a"},"spec":{"nodeName":"n1","containers":[{"image":"x"},{"image":"y"}]}}`),
		obj(t, `{"metadata":{"name":"bb"},"spec":{"containers":[{"image":"z"}]}}`),
	}
	var b bytes.Buffer
	if err := PrintCustomColumns(&b, cols, items, false); err != nil {
		t.Fatal(err)
	}
	want := "NAME   IMAGES   NODE\na      x,y      n1\nbb     z        <none>\n"
	if b.String() != want {
		t.Errorf("custom columns:\n%s\nwant\n%s", b.String(), want)
	}
	// Maps and lists print as kubectl prints them: Go's %v, not JSON.
	cols, err = ParseCustomColumns("N:.metadata.name,L:.metadata.labels,P:.spec.ports")
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	items = []Obj{obj(t, `{"metadata":{"name":"a","labels":{"b":"2","a":"1"}},"spec":{"ports":[80,443]}}`)}
	if err := PrintCustomColumns(&b, cols, items, true); err != nil {
		t.Fatal(err)
	}
	if want := "a     map[a:1 b:2]   [80 443]\n"; b.String() != want {
		t.Errorf("custom columns of a map and a list: %q, want %q", b.String(), want)
	}
	for _, bad := range []string{"", "NAME", "NAME:.a[", "NAME:{.a}}"} {
		if _, err := ParseCustomColumns(bad); err == nil {
			t.Errorf("ParseCustomColumns(%q) accepted", bad)
		}
	}
}

func TestSortBy(t *testing.T) {
	t.Parallel()
	items := []Obj{
		obj(t, `{"metadata":{"name":"pod-10"},"n":10}`),
		obj(t, `{"metadata":{"name":"pod-2"},"n":2}`),
		obj(t, `{"metadata":{"name":"pod-1"}}`),
	}
	names := func() string {
		var s []string
		for _, it := range items {
			s = append(s, str(it, "metadata", "name"))
		}
		return strings.Join(s, " ")
	}
	if err := SortBy(items, ".metadata.name"); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "pod-1 pod-2 pod-10" {
		t.Errorf("by name (natural): %s", got)
	}
	if err := SortBy(items, "{.n}"); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "pod-1 pod-2 pod-10" {
		t.Errorf("by number, missing first: %s", got)
	}
}

func TestNaturalLess(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		less bool
	}{
		{"a2", "a10", true}, {"a10", "a2", false}, {"a", "b", true}, {"a", "a1", true}, {"x01", "x1", false}, {"same", "same", false},
	} {
		if got := NaturalLess(tt.a, tt.b); got != tt.less {
			t.Errorf("NaturalLess(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}
