package get

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// printer writes objects of one format; table state (header printed) lives
// here so a watch continues the table.
type printer struct {
	out        io.Writer
	format     string // "", wide, yaml, json, name, jsonpath, custom-columns
	jsonpath   string
	columns    []printers.Column
	showLabels bool
	noHeaders  bool
	// labelColumns are the -L keys.
	labelColumns []string
	// eventsTable prints tables as "kubectl events" does.
	eventsTable bool
	// event is the watch event type of the objects being printed, with
	// --output-watch-events; "" otherwise.
	event    string
	withNS   bool
	withKind bool
	// showManaged keeps managedFields in -o json/yaml (--show-managed-fields).
	showManaged bool
	header      bool // a table header has been printed
	// tw lays out the tables; tables prints the current type's (a watch
	// continues it).
	tw     *printers.TabWriter
	tables *printers.TablePrinter
}

func newPrinter(out io.Writer, output string) (*printer, error) {
	p := &printer{out: out, tw: printers.NewTabWriter(out)}
	format, arg, _ := strings.Cut(output, "=")
	switch format {
	case "", "wide", "yaml", "json", "name":
		if arg != "" {
			return nil, badFormat(output)
		}
	case "jsonpath":
		if arg == "" {
			return nil, errors.New("template format specified but no template given")
		}
		if _, err := printers.JSONPath(arg); err != nil {
			return nil, err
		}
		p.jsonpath = arg
	case "custom-columns":
		cols, err := printers.ParseCustomColumns(arg)
		if err != nil {
			return nil, err
		}
		p.columns = cols
	default:
		return nil, badFormat(output)
	}
	p.format = format
	return p, nil
}

func badFormat(o string) error {
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", o, formats)
}

// tabular says whether the format is a table the server makes ("", wide).
func (p *printer) tabular() bool { return p.format == "" || p.format == "wide" }

// startTable begins the table of a resource type, with kubectl's
// decorations: namespaces with -A for namespaced types, kinds before names
// when several types (or --show-kind) are printed.
func (p *printer) startTable(info api.ResourceInfo) {
	opts := printers.TableOptions{Wide: p.format == "wide", WithNamespace: p.withNS && info.Namespaced,
		NoHeaders: p.noHeaders, ShowLabels: p.showLabels, LabelColumns: p.labelColumns}
	if p.withKind {
		opts.Kind = printers.ResourceName(info.Kind, info.Group)
	}
	p.tw.ResetWidths()
	p.tables = printers.NewTablePrinter(p.tw, opts)
}

// printTable prints a table of the current type (startTable) and flushes
// it; event is the watch event type with --output-watch-events.
func (p *printer) printTable(t *api.Table, event string) error {
	p.tables.Print(t, event)
	return p.tw.Flush()
}

// batch says whether the format prints all objects at the end, as one
// document (a List), rather than per type.
func (p *printer) batch() bool {
	switch p.format {
	case "yaml", "json", "jsonpath":
		return true
	}
	return false
}

// print writes items of one resource type.
func (p *printer) print(info api.ResourceInfo, items []printers.Obj) error {
	switch p.format {
	case "name":
		for _, it := range items {
			md, _ := it["metadata"].(map[string]any)
			fmt.Fprintf(p.out, "%s/%v\n", resource.KindName(info), md["name"])
		}
		return nil
	case "custom-columns":
		err := printers.PrintCustomColumns(p.out, p.columns, items, p.noHeaders || p.header)
		p.header = true
		return err
	case "yaml", "json":
		for _, it := range items {
			if p.format == "yaml" && p.header {
				fmt.Fprintln(p.out, "---")
			}
			p.header = true
			if p.event != "" {
				// kubectl's watch event object: {"type":..., "object":...}.
				it = printers.Obj{"type": p.event, "object": it}
			}
			if err := printers.PrintObjectsManaged(p.out, p.format, []printers.Obj{it}, false, p.showManaged); err != nil {
				return err
			}
		}
		return nil
	case "jsonpath":
		return p.printAll(items, false)
	}
	if p.eventsTable {
		return p.printEvents(items)
	}
	return fmt.Errorf("%s: objects given to a table printer", info.Resource)
}

// printWatched writes one object of a watch.
func (p *printer) printWatched(info api.ResourceInfo, it printers.Obj) error {
	if p.format == "jsonpath" {
		if p.event != "" {
			it = printers.Obj{"type": p.event, "object": it}
		}
		return p.printAll([]printers.Obj{it}, false)
	}
	return p.print(info, []printers.Obj{it})
}

// printAll writes the batch formats: one object as itself, else a List.
func (p *printer) printAll(items []printers.Obj, asList bool) error {
	if p.format == "jsonpath" {
		j, err := printers.JSONPath(p.jsonpath)
		if err != nil {
			return err
		}
		var v any = listOf(items)
		if len(items) == 1 && !asList {
			v = items[0]
		}
		return printers.PrintJSONPath(p.out, j, v)
	}
	return printers.PrintObjectsManaged(p.out, p.format, items, asList, p.showManaged)
}

func listOf(items []printers.Obj) map[string]any {
	l := make([]any, len(items))
	for i, it := range items {
		l[i] = it
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": l, "metadata": map[string]any{"resourceVersion": ""}}
}
