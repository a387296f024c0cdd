package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/minik8s/minik8s/api"
	serverprinters "github.com/minik8s/minik8s/apiserver/printers"
)

// Obj is an object as decoded JSON.
type Obj = map[string]any

// TableOptions are kubectl's decorations of the tables a server sends.
type TableOptions struct {
	// Wide shows the columns of priority > 0 (-o wide).
	Wide bool
	// WithNamespace adds a NAMESPACE column first (-A).
	WithNamespace bool
	// Kind, when set, prefixes names: "deployment.apps/web" (several
	// types, or --show-kind).
	Kind      string
	NoHeaders bool
	// ShowLabels adds a LABELS column last (--show-labels).
	ShowLabels bool
	// LabelColumns are the -L keys: a column each, before LABELS, headed
	// by the key's last path segment in upper case.
	LabelColumns []string
}

// TablePrinter prints the server's tables of one resource type as kubectl
// does (cli-runtime's HumanReadablePrinter): the columns of the first
// table, its header unless a header with the same columns was printed
// already, the wide columns with -o wide only; the tables of a watch, which
// carry no columns after the first, continue it.
type TablePrinter struct {
	w              *TabWriter
	opts           TableOptions
	lastColumns    []api.TableColumnDefinition
	printedHeaders bool
}

// NewTablePrinter returns a printer writing to w; the caller flushes w.
func NewTablePrinter(w *TabWriter, opts TableOptions) *TablePrinter {
	return &TablePrinter{w: w, opts: opts}
}

// Print writes t. eventType, with --output-watch-events, is shown in a
// first EVENT column.
func (p *TablePrinter) Print(t *api.Table, eventType string) {
	opts := p.opts
	if p.printedHeaders && (len(t.ColumnDefinitions) == 0 || reflect.DeepEqual(t.ColumnDefinitions, p.lastColumns)) {
		opts.NoHeaders = true
	}
	cols := t.ColumnDefinitions
	if len(cols) == 0 {
		// A watch's later tables reuse the first one's columns.
		cols = p.lastColumns
	} else if !reflect.DeepEqual(cols, p.lastColumns) {
		p.lastColumns, p.printedHeaders = cols, false
	}
	if len(t.Rows) > 0 {
		p.printedHeaders = true
	}
	cols, rows := decorate(cols, t.Rows, opts)
	if eventType != "" {
		cols = append([]api.TableColumnDefinition{{Name: "Event", Type: "string"}}, cols...)
		for i := range rows {
			rows[i] = append([]any{watchEventType(eventType)}, rows[i]...)
		}
	}
	printTable(p.w, cols, rows, opts)
}

// watchEventType pads the event types to one width, as kubectl does.
func watchEventType(t string) string {
	switch t {
	case "ADDED":
		return "ADDED   "
	case "DELETED":
		return "DELETED "
	case "ERROR":
		return "ERROR   "
	}
	return t
}

// rowMeta is what kubectl reads of a row's object: the namespace and
// labels (the server sends the object's metadata by default).
type rowMeta struct {
	Metadata struct {
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// decorate is kubectl's decorateTable: the NAMESPACE column first, the -L
// and LABELS columns last, from each row's object (blank without one),
// and the kind before each name.
func decorate(cols []api.TableColumnDefinition, in []api.TableRow, opts TableOptions) ([]api.TableColumnDefinition, [][]any) {
	nameColumn := -1
	if opts.Kind != "" {
		for i, c := range cols {
			if c.Format == "name" && c.Type == "string" {
				nameColumn = i
				break
			}
		}
	}
	var out []api.TableColumnDefinition
	if opts.WithNamespace {
		out = append(out, api.TableColumnDefinition{Name: "Namespace", Type: "string"})
	}
	out = append(out, cols...)
	for _, k := range opts.LabelColumns {
		parts := strings.Split(k, "/")
		out = append(out, api.TableColumnDefinition{Name: strings.ToUpper(parts[len(parts)-1]), Type: "string"})
	}
	if opts.ShowLabels {
		out = append(out, api.TableColumnDefinition{Name: "Labels", Type: "string"})
	}
	rows := make([][]any, len(in))
	for i, r := range in {
		cells := slices.Clone(r.Cells)
		if nameColumn >= 0 && nameColumn < len(cells) {
			cells[nameColumn] = fmt.Sprintf("%s/%v", opts.Kind, cells[nameColumn])
		}
		var m *rowMeta
		if obj := bytes.TrimSpace(r.Object); len(obj) > 0 && !bytes.Equal(obj, []byte("null")) {
			m = &rowMeta{}
			if json.Unmarshal(obj, m) != nil {
				m = nil
			}
		}
		if opts.WithNamespace {
			var ns any
			if m != nil {
				ns = m.Metadata.Namespace
			}
			cells = append([]any{ns}, cells...)
		}
		if m == nil {
			// kubectl's loop, whose bound shrinks as it appends: it pads
			// half the missing cells.
			for j := 0; j < len(out)-len(cells); j++ {
				cells = append(cells, nil)
			}
		} else {
			for _, k := range opts.LabelColumns {
				cells = append(cells, m.Metadata.Labels[k])
			}
			if opts.ShowLabels {
				cells = append(cells, OrNone(JoinLabels(m.Metadata.Labels)))
			}
		}
		rows[i] = cells
	}
	return out, rows
}

// flushRows is how many rows kubectl writes between flushes of a big
// table.
const flushRows = 100

// printTable is kubectl's printTable: no header for no rows, the wide
// columns only with Wide, a cell cut at its first line break ("..."
// marks the cut) and terminal escapes made visible. As kubectl does before
// flushing every 100 rows, the header (or, without one, the first row) is
// padded to each column's longest cell in bytes, so later flushes keep
// the first one's widths.
func printTable(w *TabWriter, cols []api.TableColumnDefinition, rows [][]any, opts TableOptions) {
	visible := func(i int) bool { return opts.Wide || cols[i].Priority == 0 }
	last := -1
	for i := range cols {
		if visible(i) {
			last = i
		}
	}
	widest := make([]int, len(cols))
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(cols) {
				break
			}
			if cell != nil && visible(i) {
				widest[i] = max(widest[i], len(cellString(cell)))
			}
		}
	}
	pad := func(b *strings.Builder, i, n int) {
		if i != last && len(rows) > 0 {
			b.WriteString(strings.Repeat(" ", max(0, widest[i]-n)))
		}
	}
	if !opts.NoHeaders {
		if len(rows) == 0 {
			return
		}
		var b strings.Builder
		first := true
		for i, c := range cols {
			if !visible(i) {
				continue
			}
			if !first {
				b.WriteByte('\t')
			}
			first = false
			name := strings.ToUpper(c.Name)
			b.WriteString(name)
			pad(&b, i, len(name))
		}
		fmt.Fprintln(w, b.String())
	}
	for ri, r := range rows {
		var b strings.Builder
		first := true
		for i, cell := range r {
			if i >= len(cols) {
				break // more cells than columns: a server's mistake, ignored
			}
			if !visible(i) {
				continue
			}
			if !first {
				b.WriteByte('\t')
			}
			first = false
			n := 0
			if cell != nil {
				n = len(cellString(cell))
				b.WriteString(cellText(cellString(cell)))
			}
			if opts.NoHeaders && ri == 0 {
				pad(&b, i, n)
			}
		}
		fmt.Fprintln(w, b.String())
		if (ri+1)%flushRows == 0 {
			w.Flush()
		}
	}
}

func cellString(cell any) string {
	if s, ok := cell.(string); ok {
		return s
	}
	return fmt.Sprint(cell)
}

var terminalEscaper = strings.NewReplacer("\x1b", "^[", "\r", "\\r")

// cellText is a cell as printed: cut at its first line break, terminal
// escapes made visible.
func cellText(s string) string {
	if i := strings.IndexAny(s, "\f\n\r"); i >= 0 {
		return terminalEscaper.Replace(s[:i]) + "..."
	}
	return terminalEscaper.Replace(s)
}

// MetadataTable is kubectl's table of objects a server sent without a
// table: NAME and AGE (cli-runtime's default print handler).
func MetadataTable(items []Obj, now time.Time) *api.Table {
	t := &api.Table{ColumnDefinitions: []api.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Age", Type: "string"},
	}}
	for _, it := range items {
		age := "<unknown>"
		if ts, err := time.Parse(time.RFC3339, str(it, "metadata", "creationTimestamp")); err == nil {
			age = duration.HumanDuration(now.Sub(ts))
		}
		obj, _ := json.Marshal(it)
		t.Rows = append(t.Rows, api.TableRow{Cells: []any{str(it, "metadata", "name"), age}, Object: obj})
	}
	return t
}

// ResourceName is kubectl's "kind.group" prefix: "pod", "deployment.apps".
func ResourceName(kind, group string) string {
	k := strings.ToLower(kind)
	if group != "" {
		return k + "." + group
	}
	return k
}

// OrNone is s, or kubectl's "<none>" for an empty cell.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// JoinLabels is kubectl's "k1=v1,k2=v2" of labels or a selector's
// matchLabels, keys sorted.
func JoinLabels[V any](m map[string]V) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// NodeRoles is a node's roles as kubectl shows them, "<none>" for none:
// the server's ROLES (node-role.kubernetes.io/ROLE and kubernetes.io/role
// labels).
func NodeRoles(labels map[string]string) string {
	return OrNone(strings.Join(serverprinters.NodeRoles(labels), ","))
}

func at(o Obj, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func str(o Obj, path ...string) string {
	s, _ := at(o, path...).(string)
	return s
}

func mapAt(o Obj, path ...string) map[string]any {
	m, _ := at(o, path...).(map[string]any)
	return m
}
