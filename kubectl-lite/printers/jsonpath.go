package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"k8s.io/client-go/util/jsonpath"
)

// JSONPath parses a kubectl -o jsonpath template ("{.metadata.name}",
// "{range .items[*]}{.metadata.name}{\"\\n\"}{end}"). Missing keys print
// nothing, as kubectl's --allow-missing-template-keys=true default.
func JSONPath(tmpl string) (*jsonpath.JSONPath, error) {
	j := jsonpath.New("out").AllowMissingKeys(true)
	if err := j.Parse(tmpl); err != nil {
		return nil, fmt.Errorf("error parsing jsonpath %s, %w", tmpl, err)
	}
	return j, nil
}

// PrintJSONPath executes j on v (one object, or a List of them).
func PrintJSONPath(out io.Writer, j *jsonpath.JSONPath, v any) error {
	var buf bytes.Buffer
	if err := j.Execute(&buf, Plain(v)); err != nil {
		return fmt.Errorf("error executing jsonpath: %w", err)
	}
	_, err := out.Write(buf.Bytes())
	return err
}

var relaxedJSONPath = regexp.MustCompile(`^\{?(\.?[^{}]*)\}?$`)

// RelaxedJSONPath accepts ".metadata.name", "metadata.name" and
// "{.metadata.name}" as kubectl's --sort-by and custom-columns do.
func RelaxedJSONPath(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	m := relaxedJSONPath.FindStringSubmatch(path)
	if m == nil {
		return "", fmt.Errorf("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'")
	}
	p := m[1]
	if !strings.HasPrefix(p, ".") {
		p = "." + p
	}
	return "{" + p + "}", nil
}

// Plain converts json.Number values to int64 or float64 so that jsonpath
// filters compare numbers as numbers.
func Plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Plain(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = Plain(e)
		}
		return s
	case []Obj:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = Plain(e)
		}
		return s
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// Column is one -o custom-columns column.
type Column struct {
	Header string
	path   *jsonpath.JSONPath
}

// ParseCustomColumns reads "NAME:.metadata.name,IMAGE:.spec.containers[*].image".
func ParseCustomColumns(spec string) ([]Column, error) {
	if spec == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	var cols []Column
	for _, part := range strings.Split(spec, ",") {
		h, p, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		rp, err := RelaxedJSONPath(p)
		if err != nil {
			return nil, err
		}
		j, err := JSONPath(rp)
		if err != nil {
			return nil, err
		}
		cols = append(cols, Column{Header: h, path: j})
	}
	return cols, nil
}

// PrintCustomColumns writes items as a table of cols; several values of
// one column are joined with commas and none is "<none>", as kubectl does.
func PrintCustomColumns(out io.Writer, cols []Column, items []Obj, noHeaders bool) error {
	w := tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
	if !noHeaders {
		heads := make([]string, len(cols))
		for i, c := range cols {
			heads[i] = c.Header
		}
		fmt.Fprintln(w, strings.Join(heads, "\t"))
	}
	for _, it := range items {
		plain := Plain(it)
		row := make([]string, len(cols))
		for i, c := range cols {
			results, err := c.path.FindResults(plain)
			if err != nil {
				return fmt.Errorf("error executing jsonpath: %w", err)
			}
			var vals []string
			for _, r := range results {
				for _, v := range r {
					vals = append(vals, valueString(v))
				}
			}
			row[i] = OrNone(strings.Join(vals, ","))
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	return w.Flush()
}

// valueString is a custom-columns cell as kubectl prints it: Go's %v of
// the value, so a map is "map[a:1]" and a list "[x y]" (jsonpath output,
// unlike custom columns, prints those as JSON).
func valueString(v reflect.Value) string {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	return fmt.Sprint(v.Interface())
}

// SortBy sorts items by the value at a --sort-by path, as kubectl does:
// numbers numerically, strings in natural order, missing values first.
func SortBy(items []Obj, path string) error {
	idx, err := SortOrder(items, path)
	if err != nil {
		return err
	}
	sorted := make([]Obj, len(items))
	for i, k := range idx {
		sorted[i] = items[k]
	}
	copy(items, sorted)
	return nil
}

// SortOrder is the order SortBy puts items in: the index of each item, in
// sorted order.
func SortOrder(items []Obj, path string) ([]int, error) {
	rp, err := RelaxedJSONPath(path)
	if err != nil {
		return nil, err
	}
	j, err := JSONPath(rp)
	if err != nil {
		return nil, err
	}
	keys := make([]any, len(items))
	for i, it := range items {
		res, err := j.FindResults(Plain(it))
		if err != nil {
			return nil, fmt.Errorf("error executing jsonpath: %w", err)
		}
		if len(res) > 0 && len(res[0]) > 0 {
			v := res[0][0]
			for v.Kind() == reflect.Interface && !v.IsNil() {
				v = v.Elem()
			}
			if v.IsValid() && v.CanInterface() {
				keys[i] = v.Interface()
			}
		}
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return less(keys[idx[a]], keys[idx[b]]) })
	return idx, nil
}

func less(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b != nil
	}
	fa, aNum := number(a)
	fb, bNum := number(b)
	if aNum && bNum {
		return fa < fb
	}
	return NaturalLess(fmt.Sprint(a), fmt.Sprint(b))
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// NaturalLess compares strings with embedded numbers by their value:
// "pod-2" < "pod-10".
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		ra, rb := rune(a[0]), rune(b[0])
		if unicode.IsDigit(ra) && unicode.IsDigit(rb) {
			na, ra := leadingDigits(a)
			nb, rb := leadingDigits(b)
			ia, _ := strconv.ParseUint(na, 10, 64)
			ib, _ := strconv.ParseUint(nb, 10, 64)
			if ia != ib {
				return ia < ib
			}
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			a, b = ra, rb
			continue
		}
		if ra != rb {
			return ra < rb
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// LabelString is kubectl's "k=v,k2=v2" of a label map, "<none>" when empty.
func LabelString(o Obj) string {
	return OrNone(JoinLabels(mapAt(o, "metadata", "labels")))
}
