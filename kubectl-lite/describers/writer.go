package describers

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// Indentation levels of kubectl's PrefixWriter.
const (
	level0 = iota
	level1
	level2
	level3
	level4
)

// prefixWriter writes tab-separated lines at an indentation level through
// one tabwriter, so consecutive lines align as kubectl's do.
type prefixWriter struct {
	tw *tabwriter.Writer
	// indent is added to every level: a nested writer's (kubectl's
	// NewNestedPrefixWriter).
	indent int
}

func newWriter(out io.Writer) *prefixWriter {
	return &prefixWriter{tw: tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)}
}

func (w *prefixWriter) write(level int, format string, a ...any) {
	fmt.Fprint(w.tw, strings.Repeat("  ", level+w.indent))
	fmt.Fprintf(w.tw, format, a...)
}

func (w *prefixWriter) flush() { w.tw.Flush() }

// nested writes through w, levels moved right by indent.
func (w *prefixWriter) nested(indent int) *prefixWriter {
	return &prefixWriter{tw: w.tw, indent: w.indent + indent}
}

// skipAnnotations are left out of describe output, as kubectl does.
var skipAnnotations = map[string]bool{api.LastAppliedConfigAnnotation: true}

const maxAnnotationLen = 140

func (w *prefixWriter) labels(title string, m map[string]string) {
	w.multiline(title, m, "=", nil)
}

func (w *prefixWriter) annotations(title string, m map[string]string) {
	w.multiline(title, m, ": ", skipAnnotations)
}

// multiline prints "Title:  k=v" with further keys on their own lines in
// the value column.
func (w *prefixWriter) multiline(title string, m map[string]string, sep string, skip map[string]bool) {
	w.write(level0, "%s:\t", title)
	keys := make([]string, 0, len(m))
	for k := range m {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		w.write(level0, "<none>\n")
		return
	}
	sort.Strings(keys)
	indent := strings.Repeat(" ", len(title)-len(strings.TrimLeft(title, " ")))
	for i, k := range keys {
		if i > 0 {
			w.write(level0, "%s\t", indent)
		}
		v := m[k]
		if len(v) > maxAnnotationLen && sep != "=" {
			v = v[:maxAnnotationLen] + "..."
		}
		w.write(level0, "%s%s%s\n", k, sep, v)
	}
}

func (w *prefixWriter) tolerations(title string, ts []api.Toleration) {
	w.write(level0, "%s:\t", title)
	if len(ts) == 0 {
		w.write(level0, "<none>\n")
		return
	}
	indent := strings.Repeat(" ", len(title)-len(strings.TrimLeft(title, " ")))
	for i, t := range ts {
		if i > 0 {
			w.write(level0, "%s\t", indent)
		}
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		if t.Effect != "" {
			s += ":" + string(t.Effect)
		}
		if t.Operator == api.TolerationOpExists && t.Value == "" {
			if t.Key != "" || t.Effect != "" {
				s += " op=Exists"
			} else {
				s += "op=Exists"
			}
		}
		if t.TolerationSeconds != nil {
			s += fmt.Sprintf(" for %ds", *t.TolerationSeconds)
		}
		w.write(level0, "%s\n", s)
	}
}

func timestamp(t api.Time) string {
	if t.IsZero() {
		return "<unset>"
	}
	return t.Format(time.RFC1123Z)
}

func since(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return printers.HumanDuration(now.Sub(t))
}

func boolString(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// selectorString is kubectl's metav1.FormatLabelSelector.
func selectorString(s *api.LabelSelector) string {
	sel, err := labels.SelectorFromLabelSelector(s)
	if err != nil {
		return "<error>"
	}
	if out := sel.String(); out != "" {
		return out
	}
	return "<none>"
}

// controller is "Kind/name" of the controlling owner, "" without one.
func controller(m *api.ObjectMeta) string {
	if r := api.GetControllerOf(m); r != nil {
		return r.Kind + "/" + r.Name
	}
	return ""
}

// events writes kubectl's Events table, oldest first; nothing when events
// were not asked for (nil).
func (w *prefixWriter) events(evs []api.Event, now time.Time) {
	if evs == nil {
		return
	}
	if len(evs) == 0 {
		w.write(level0, "Events:\t<none>\n")
		return
	}
	w.flush()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].LastTimestamp.Before(evs[j].LastTimestamp.Time) })
	w.write(level0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.write(level1, "----\t------\t----\t----\t-------\n")
	for _, e := range evs {
		first := since(e.EventTime.Time, now)
		if e.EventTime.IsZero() {
			first = since(e.FirstTimestamp.Time, now)
		}
		interval := first
		switch {
		case e.Series != nil:
			interval = fmt.Sprintf("%s (x%d over %s)", since(e.Series.LastObservedTime.Time, now), e.Series.Count, first)
		case e.Count > 1:
			interval = fmt.Sprintf("%s (x%d over %s)", since(e.LastTimestamp.Time, now), e.Count, first)
		}
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		msg := strings.TrimSpace(e.Message)
		if e.InvolvedObject.FieldPath != "" {
			msg = e.InvolvedObject.FieldPath + ": " + msg
		}
		w.write(level1, "%v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, interval, source, msg)
	}
}
