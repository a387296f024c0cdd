package describers

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/minik8s/minik8s/api"
)

// genericSkip are the fields kubectl's generic describer leaves out: the
// metadata it prints above the dump, and managedFields.
var genericSkip = []string{".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels", ".metadata.annotations"}

// describeGeneric is kubectl's generic describer, used for every kind it
// has no describer of its own for (custom resources among them): name,
// namespace, labels and annotations, then every field, sorted, under a
// readable label ("apiVersion" is "API Version"), one level of indentation
// per nesting.
func describeGeneric(w *prefixWriter, obj map[string]any, evs []api.Event, now time.Time) {
	md, _ := obj["metadata"].(map[string]any)
	str := func(k string) string { s, _ := md[k].(string); return s }
	strMap := func(k string) map[string]string {
		m, _ := md[k].(map[string]any)
		out := make(map[string]string, len(m))
		for key, v := range m {
			out[key] = fmt.Sprint(v)
		}
		return out
	}
	w.write(level0, "Name:\t%s\n", str("name"))
	w.write(level0, "Namespace:\t%s\n", str("namespace"))
	w.labels("Labels", strMap("labels"))
	w.annotations("Annotations", strMap("annotations"))
	unstructuredContent(w, level0, obj, "")
	w.events(evs, now)
}

func unstructuredContent(w *prefixWriter, level int, content map[string]any, path string) {
	for _, field := range slices.Sorted(maps.Keys(content)) {
		fieldPath := path + "." + field
		if slices.Contains(genericSkip, fieldPath) {
			continue
		}
		switch v := content[field].(type) {
		case map[string]any:
			w.write(level, "%s:\n", smartLabel(field))
			unstructuredContent(w, level+1, v, fieldPath)
		case []any:
			w.write(level, "%s:\n", smartLabel(field))
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					unstructuredContent(w, level+1, m, fieldPath)
				} else {
					w.write(level+1, "%v\n", scalar(item))
				}
			}
		default:
			w.write(level, "%s:\t%v\n", smartLabel(field), scalar(v))
		}
	}
}

// scalar is a JSON value as client-go's unstructured decoding holds it:
// whole numbers as int64, others as float64; lists print as Go prints
// them.
func scalar(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = scalar(v[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k := range v {
			out[k] = scalar(v[k])
		}
		return out
	}
	return v
}

var genericAcronyms = []string{"API", "URL", "UID", "GUID"}

// smartLabel turns a field name into kubectl's label: camel case split
// into title-cased words, runs of capitals kept together ("podCIDRs" is
// "Pod CIDRs"), known acronyms in capitals. Names with characters other
// than letters and '-' are kept as they are.
func smartLabel(field string) string {
	if strings.IndexFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) >= 0 {
		return field
	}
	parts := camelSplit(field)
	var merged []string
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if i < len(parts)-1 && len(p) >= 2 && isUpper(p) && unicode.IsUpper(rune(parts[i+1][0])) {
			merged = append(merged, p+parts[i+1])
			i++
			continue
		}
		merged = append(merged, p)
	}
	out := make([]string, 0, len(merged))
	for _, p := range merged {
		if p == "_" {
			continue
		}
		if slices.Contains(genericAcronyms, strings.ToUpper(p)) {
			p = strings.ToUpper(p)
		} else if strings.ToLower(p) == p {
			p = cases.Title(language.English).String(p)
		}
		out = append(out, p)
	}
	return strings.Join(out, " ")
}

func isUpper(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) && !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// camelSplit splits s into runs of lower case, upper case, digits and
// other characters, moving the last capital of a run onto the lower-case
// run after it ("PDFLoader" is "PDF", "Loader").
func camelSplit(s string) []string {
	if !utf8.ValidString(s) {
		return []string{s}
	}
	class := func(r rune) int {
		switch {
		case unicode.IsLower(r):
			return 1
		case unicode.IsUpper(r):
			return 2
		case unicode.IsDigit(r):
			return 3
		}
		return 4
	}
	var runs [][]rune
	last := 0
	for _, r := range s {
		c := class(r)
		if c == last {
			runs[len(runs)-1] = append(runs[len(runs)-1], r)
		} else {
			runs = append(runs, []rune{r})
		}
		last = c
	}
	for i := 0; i < len(runs)-1; i++ {
		if unicode.IsUpper(runs[i][0]) && unicode.IsLower(runs[i+1][0]) {
			runs[i+1] = append([]rune{runs[i][len(runs[i])-1]}, runs[i+1]...)
			runs[i] = runs[i][:len(runs[i])-1]
		}
	}
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		if len(r) > 0 {
			out = append(out, string(r))
		}
	}
	return out
}
