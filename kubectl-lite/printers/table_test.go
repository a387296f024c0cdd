package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/minik8s/minik8s/api"
)

var now = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func obj(t *testing.T, s string) Obj {
	t.Helper()
	var m Obj
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// podTable is a server's pod table: two rows, their metadata as objects.
func podTable() *api.Table {
	return &api.Table{
		ColumnDefinitions: []api.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"}, {Name: "Ready", Type: "string"},
			{Name: "Restarts", Type: "integer"}, {Name: "Age", Type: "string"}, {Name: "Node", Type: "string", Priority: 1},
		},
		Rows: []api.TableRow{
			{Cells: []any{"web-1", "1/1", json.Number("3"), "5m", "n1"},
				Object: json.RawMessage(`{"kind":"PartialObjectMetadata","metadata":{"name":"web-1","namespace":"ns1","labels":{"app":"web","tier":"front"}}}`)},
			{Cells: []any{"db-0", "0/1", json.Number("0"), "10d", "n2"},
				Object: json.RawMessage(`{"kind":"PartialObjectMetadata","metadata":{"name":"db-0","namespace":"ns2"}}`)},
		},
	}
}

// TestTablePrinter checks kubectl's decorations of a server table: -o
// wide, -A, the kind prefix, -L and --show-labels, --no-headers.
func TestTablePrinter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts TableOptions
		want string
	}{
		{"plain", TableOptions{},
			"NAME    READY   RESTARTS   AGE\n" +
				"web-1   1/1     3          5m\n" +
				"db-0    0/1     0          10d\n"},
		{"wide", TableOptions{Wide: true},
			"NAME    READY   RESTARTS   AGE   NODE\n" +
				"web-1   1/1     3          5m    n1\n" +
				"db-0    0/1     0          10d   n2\n"},
		{"namespaces and kind", TableOptions{WithNamespace: true, Kind: "pod"},
			"NAMESPACE   NAME        READY   RESTARTS   AGE\n" +
				"ns1         pod/web-1   1/1     3          5m\n" +
				"ns2         pod/db-0    0/1     0          10d\n"},
		{"label columns and labels", TableOptions{LabelColumns: []string{"app", "example.com/tier"}, ShowLabels: true},
			"NAME    READY   RESTARTS   AGE   APP   TIER   LABELS\n" +
				"web-1   1/1     3          5m    web          app=web,tier=front\n" +
				"db-0    0/1     0          10d                <none>\n"},
		{"no headers", TableOptions{NoHeaders: true},
			"web-1   1/1   3     5m\n" +
				"db-0    0/1   0     10d\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			w := NewTabWriter(&b)
			NewTablePrinter(w, tt.opts).Print(podTable(), "")
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

// TestTablePrinterWatch: a watch's tables continue the first one: no
// header again, the columns of the first table for those sent without,
// widths that only grow, and the padded event types of
// --output-watch-events.
func TestTablePrinterWatch(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewTabWriter(&b)
	p := NewTablePrinter(w, TableOptions{})
	p.Print(podTable(), "ADDED")
	w.Flush()
	next := &api.Table{Rows: []api.TableRow{{Cells: []any{"a-much-longer-name", "1/1", json.Number("0"), "1s", "n3"}}}}
	p.Print(next, "MODIFIED")
	w.Flush()
	p.Print(&api.Table{Rows: []api.TableRow{{Cells: []any{"x", "0/1", json.Number("1"), "2s", "n3"}}}}, "DELETED")
	w.Flush()
	want := "EVENT      NAME    READY   RESTARTS   AGE\n" +
		"ADDED      web-1   1/1     3          5m\n" +
		"ADDED      db-0    0/1     0          10d\n" +
		"MODIFIED   a-much-longer-name   1/1     0          1s\n" +
		"DELETED    x                    0/1     1          2s\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestTablePrinterCells: line breaks cut a cell, terminal escapes are made
// visible, missing objects leave their columns blank, and an empty table
// prints nothing, not even its header.
func TestTablePrinterCells(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewTabWriter(&b)
	p := NewTablePrinter(w, TableOptions{WithNamespace: true, ShowLabels: true})
	p.Print(&api.Table{ColumnDefinitions: []api.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Message", Type: "string"}}}, "")
	p.Print(&api.Table{ColumnDefinitions: []api.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Message", Type: "string"}},
		Rows: []api.TableRow{{Cells: []any{"e1", "first line\nsecond"}, Object: json.RawMessage("null")}, {Cells: []any{"e2", "red \x1b[31m"}}}}, "")
	w.Flush()
	// kubectl pads the header to the longest cell in bytes before the cut
	// (17 for "first line\nsecond"), so the column is that wide.
	want := "NAMESPACE   NAME   MESSAGE             LABELS\n" +
		"            e1     first line...       \n" +
		"            e2     red ^[[31m          \n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// TestTabWriterMatchesTextTabwriter: without earlier flushes the layout is
// text/tabwriter's with kubectl's settings, ragged lines included.
func TestTabWriterMatchesTextTabwriter(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"NAME\tREADY\tAGE\nweb-1\t1/1\t5m\nlonger-name\t0/1\t10d\n",
		"a\tb\n\nccc\tdd\tee\nf\n\tg\th\ti\nj\tk",
		"ünïcode\tx\ny\tz\n",
		"",
		"no tabs at all\nhere\n",
	} {
		var want, got bytes.Buffer
		tw := tabwriter.NewWriter(&want, 6, 4, 3, ' ', 0)
		fmt.Fprint(tw, text)
		tw.Flush()
		w := NewTabWriter(&got)
		fmt.Fprint(w, text)
		w.Flush()
		if got.String() != want.String() {
			t.Errorf("%q:\ngot\n%q\nwant\n%q", text, got.String(), want.String())
		}
	}
}

func TestTabWriterRemembersWidths(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewTabWriter(&b)
	fmt.Fprint(w, "NAME\tAGE\nweb-1234567\t5m\n")
	w.Flush()
	fmt.Fprint(w, "x\t1s\n")
	w.Flush()
	w.ResetWidths()
	fmt.Fprint(w, "y\t2s\n")
	w.Flush()
	want := "NAME          AGE\nweb-1234567   5m\nx             1s\ny     2s\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestMetadataTable is what kubectl shows of objects from a server that
// sends no tables: their names and ages.
func TestMetadataTable(t *testing.T) {
	t.Parallel()
	items := []Obj{obj(t, `{"metadata":{"name":"w","namespace":"x","creationTimestamp":"2026-01-02T11:55:00Z"}}`), obj(t, `{"metadata":{"name":"v"}}`)}
	var b bytes.Buffer
	w := NewTabWriter(&b)
	NewTablePrinter(w, TableOptions{WithNamespace: true}).Print(MetadataTable(items, now), "")
	w.Flush()
	if want := "NAMESPACE   NAME   AGE\nx           w      5m\n            v      <unknown>\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		90 * time.Second: "90s", 5*time.Minute + 3*time.Second: "5m3s", 150 * time.Minute: "150m",
		30 * time.Hour: "30h", 3*24*time.Hour + 4*time.Hour: "3d4h", -2 * time.Second: "<invalid>",
	} {
		if got := HumanDuration(d); got != want {
			t.Errorf("HumanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestNodeRoles(t *testing.T) {
	t.Parallel()
	if got := NodeRoles(map[string]string{"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "", "x": "y"}); got != "control-plane,worker" {
		t.Errorf("NodeRoles = %q", got)
	}
	if got := NodeRoles(nil); got != "<none>" {
		t.Errorf("NodeRoles(nil) = %q", got)
	}
}

func TestPrintObjects(t *testing.T) {
	t.Parallel()
	o := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"key":"1"}}`)
	var out bytes.Buffer
	if err := PrintObjects(&out, "yaml", []Obj{o}, false); err != nil {
		t.Fatal(err)
	}
	if want := "apiVersion: v1\ndata:\n  key: \"1\"\nkind: ConfigMap\nmetadata:\n  name: x\n"; out.String() != want {
		t.Errorf("yaml = %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := PrintObjects(&out, "json", []Obj{o}, true); err != nil {
		t.Fatal(err)
	}
	var l map[string]any
	if err := json.Unmarshal(out.Bytes(), &l); err != nil || l["kind"] != "List" || len(l["items"].([]any)) != 1 {
		t.Errorf("json list = %s (%v)", out.String(), err)
	}
	if err := PrintObjects(&out, "xml", []Obj{o}, false); err == nil {
		t.Error("unknown format accepted")
	}
}
