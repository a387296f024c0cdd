package get

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/apply"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

type options struct {
	allNamespaces bool
	selector      string
	fieldSelector string
	output        string
	showLabels    bool
	sortBy        string
	watch         bool
	watchOnly     bool
	noHeaders     bool
	ignoreNF      bool
	labelColumns  []string
	showKind      bool
	files         []string
	recursive     bool
	watchEvents   bool
	raw           string
}

const formats = "custom-columns,json,jsonpath,name,wide,yaml"

// NewCommand returns the get command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME...",
		Short: "Display one or many resources",
		Long: `Display one or many resources.

Prints a table of the most important information about the specified
resources. Use -o for YAML, JSON, names, a jsonpath template or custom
columns, -l to filter on labels and -w to stream changes.`,
		Example: `  kubectl-lite get pods -o wide
  kubectl-lite get deploy,rs,po -l app=web
  kubectl-lite get pod web-1 -o jsonpath='{.status.podIP}'
  kubectl-lite get pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName
  kubectl-lite get events --sort-by=.lastTimestamp
  kubectl-lite get pods -w`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, g, args)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.")
	f.StringVarP(&o.output, "output", "o", "", "Output format. One of: ("+formats+").")
	f.BoolVar(&o.showLabels, "show-labels", false, "When printing, show all labels as the last column.")
	f.StringVar(&o.sortBy, "sort-by", "", "If non-empty, sort list types using this field specification (a JSONPath expression, '{.metadata.name}').")
	f.BoolVarP(&o.watch, "watch", "w", false, "After listing/getting the requested object, watch for changes.")
	f.BoolVar(&o.watchOnly, "watch-only", false, "Watch for changes to the requested object(s), without listing/getting first.")
	f.BoolVar(&o.noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers.")
	f.BoolVar(&o.ignoreNF, "ignore-not-found", false, "If set to true, suppresses NotFound error for specific objects that do not exist. Using this flag with commands that query for collections of resources has no effect when no resources are found.")
	f.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "Accepts a comma separated list of labels that are going to be presented as columns. Names are case-sensitive. You can also use multiple flag options like -L label1 -L label2...")
	f.StringVar(&o.raw, "raw", "", "Raw URI to request from the server.  Uses the transport specified by the kubeconfig file.")
	f.BoolVar(&o.watchEvents, "output-watch-events", false, "Output watch event objects when --watch or --watch-only is used. Existing objects are output as initial ADDED events.")
	f.BoolVar(&o.showKind, "show-kind", false, "If present, list the resource type for the requested object(s).")
	f.StringSliceVarP(&o.files, "filename", "f", nil, "Filename, directory, or URL to files identifying the resource to get from a server.")
	f.BoolVarP(&o.recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively.")
	return cmd
}

// Resolve turns "po,deploy" or "all" into resources (see resource.Resolve).
func Resolve(typeArg string) ([]api.ResourceInfo, error) { return resource.Resolve(typeArg) }

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
	header   bool // a table header has been printed
}

func newPrinter(out io.Writer, output string) (*printer, error) {
	p := &printer{out: out}
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
			if err := printers.PrintObjects(p.out, p.format, []printers.Obj{it}, false); err != nil {
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
	err := printers.PrintTable(p.out, items, printers.Options{
		Wide: p.format == "wide", WithNamespace: p.withNS && info.Namespaced,
		WithKind: p.withKind, Kind: info.Kind, Group: info.Group, Now: time.Now(),
		ShowLabels: p.showLabels, NoHeaders: p.noHeaders || p.header, LabelColumns: p.labelColumns,
		Event: p.event,
	})
	p.header = true
	return err
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
	return printers.PrintObjects(p.out, p.format, items, asList)
}

func listOf(items []printers.Obj) map[string]any {
	l := make([]any, len(items))
	for i, it := range items {
		l[i] = it
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": l, "metadata": map[string]any{"resourceVersion": ""}}
}

func (o *options) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	if o.raw != "" {
		return o.getRaw(cmd, streams, g, args)
	}
	p, err := newPrinter(streams.Out, o.output)
	if err != nil {
		return err
	}
	p.showLabels, p.noHeaders, p.withNS, p.labelColumns = o.showLabels, o.noHeaders, o.allNamespaces, o.labelColumns
	ns, err := g.DefaultNamespace()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		ns = ""
	}
	var sel resource.Selection
	switch {
	case len(o.files) > 0:
		if len(args) > 0 {
			return errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
		}
		objs, err := apply.Objects(streams, g, apply.Files{Filenames: o.files, Recursive: o.recursive})
		if err != nil {
			return err
		}
		for _, ob := range objs {
			sel.Refs = append(sel.Refs, resource.Ref{Info: ob.Info, Namespace: ob.Namespace(), Name: ob.Name()})
		}
	case len(args) == 0:
		return errors.New("You must specify the type of resource to get. Use \"kubectl-lite api-resources\" for a complete list of supported resources.")
	default:
		if sel, err = resource.Parse(args, ns, true); err != nil {
			return err
		}
	}
	if len(sel.Refs) > 0 && o.selector != "" {
		return errors.New("name cannot be provided when a selector is specified")
	}
	watching := o.watch || o.watchOnly
	if o.watchEvents && watching {
		// Existing objects print as initial ADDED events.
		p.event = string(api.Added)
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()

	// Group what was asked by resource type, in the order given.
	type group struct {
		info  api.ResourceInfo
		ns    string
		names []string
	}
	var groups []*group
	for _, info := range sel.Types {
		groups = append(groups, &group{info: info, ns: ns})
	}
	for _, r := range sel.Refs {
		if r.Info.Namespaced && r.Namespace == "" {
			return errors.New("a resource cannot be retrieved by name across all namespaces")
		}
		if n := len(groups); n > 0 && groups[n-1].info.Resource == r.Info.Resource && groups[n-1].ns == r.Namespace && groups[n-1].names != nil {
			groups[n-1].names = append(groups[n-1].names, r.Name)
			continue
		}
		groups = append(groups, &group{info: r.Info, ns: r.Namespace, names: []string{r.Name}})
	}
	if watching && len(groups) > 1 {
		return errors.New("watch is only supported on individual resources and resource collections, but multiple resource types were found")
	}
	if watching && len(groups[0].names) > 1 {
		return fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", len(groups[0].names))
	}
	p.withKind = len(groups) > 1 || o.showKind

	var (
		firstErr error // the last error, returned
		all      []printers.Obj
		printed  bool
		watchRV  string
	)
	for _, gr := range groups {
		d := c.Dynamic(gr.info).Namespace(gr.ns)
		var items []printers.Obj
		if gr.names != nil {
			for _, n := range gr.names {
				u, err := d.Get(ctx, n)
				if err != nil {
					if o.ignoreNF && apierrors.IsNotFound(err) {
						continue
					}
					// kubectl reports every missing name: all but the last
					// here, the last on the way out.
					if firstErr != nil {
						fmt.Fprintln(streams.ErrOut, cli.FormatError(firstErr))
					}
					firstErr = err
					continue
				}
				items = append(items, u.Object)
				watchRV = u.GetResourceVersion()
			}
		} else {
			l, err := d.List(ctx, client.ListOptions{LabelSelector: o.selector, FieldSelector: o.fieldSelector})
			if err != nil {
				return err
			}
			watchRV = l.ListMeta.ResourceVersion
			for _, u := range l.Items {
				items = append(items, u.Object)
			}
		}
		if o.watchOnly || len(items) == 0 {
			continue
		}
		if err := o.sort(gr.info, items); err != nil {
			return err
		}
		switch {
		case p.batch() && watching:
			// A watch prints objects one by one, the listed ones too.
			for _, it := range items {
				if err := p.printWatched(gr.info, it); err != nil {
					return err
				}
			}
		case p.batch():
			all = append(all, items...)
		default:
			if printed && p.format != "name" && p.format != "custom-columns" {
				fmt.Fprintln(streams.Out)
				p.header = false
			}
			if err := p.print(gr.info, items); err != nil {
				return err
			}
		}
		printed = true
	}
	if p.batch() && !o.watchOnly && !watching {
		if len(all) > 0 || len(sel.Refs) == 0 {
			asList := len(sel.Refs) != 1
			if err := p.printAll(all, asList); err != nil {
				return err
			}
			printed = true
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if !printed && !o.watchOnly && !o.ignoreNF {
		fmt.Fprintln(streams.ErrOut, noResources(ns, groups[0].info, len(groups) > 1))
	}
	if !watching {
		return nil
	}
	if p.batch() {
		p.header = printed
	}
	gr := groups[0]
	fs := o.fieldSelector
	if len(gr.names) == 1 {
		fs = "metadata.name=" + gr.names[0]
	}
	return watch(cmd, c.Dynamic(gr.info).Namespace(gr.ns), p, gr.info, client.ListOptions{
		LabelSelector: o.selector, FieldSelector: fs, ResourceVersion: watchRV,
	}, o.watchEvents)
}

// getRaw prints the body of a GET of --raw, as the server sent it.
func (o *options) getRaw(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	if len(args) > 0 {
		return errors.New("arguments may not be passed when --raw is specified")
	}
	u, err := url.Parse(o.raw)
	if err != nil || !strings.HasPrefix(u.Path, "/") {
		return fmt.Errorf("--raw must be a path starting with /, not %q", o.raw)
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	b, err := c.Do(cmd.Context(), client.Request{Path: u.Path, Query: u.Query()})
	if err != nil {
		return err
	}
	_, err = streams.Out.Write(b)
	return err
}

// sort orders a type's items by --sort-by; events without it are sorted by
// time, oldest first, as kubectl shows them.
func (o *options) sort(info api.ResourceInfo, items []printers.Obj) error {
	if o.sortBy != "" {
		return printers.SortBy(items, o.sortBy)
	}
	if info.Kind == "Event" {
		sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]).Before(eventTime(items[j])) })
	}
	return nil
}

func eventTime(o printers.Obj) time.Time {
	for _, k := range []string{"lastTimestamp", "eventTime", "firstTimestamp"} {
		if s, ok := o[k].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
	}
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["creationTimestamp"].(string)
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// watch prints every change as it arrives, until the server ends the
// stream or the command is interrupted.
func watch(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool) error {
	return watchWith(cmd, d, p, info, lo, watchEvents, nil)
}

// watchFiltered is watch printing only the objects keep accepts.
func watchFiltered(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, keep func(printers.Obj) bool) error {
	return watchWith(cmd, d, p, info, lo, false, keep)
}

func watchWith(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool, keep func(printers.Obj) bool) error {
	ctx := cmd.Context()
	w, err := d.Watch(ctx, lo)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case api.Error:
				if ev.Status != nil {
					return fmt.Errorf("watch: %s", ev.Status.Message)
				}
				return errors.New("watch ended with an error")
			case api.Bookmark:
				continue
			}
			if ev.Object == nil {
				continue
			}
			if keep != nil && !keep(ev.Object.Object) {
				continue
			}
			if watchEvents {
				p.event = string(ev.Type)
			}
			if err := p.printWatched(info, ev.Object.Object); err != nil {
				return err
			}
		}
	}
}

// noResources is kubectl's message for an empty result.
func noResources(ns string, info api.ResourceInfo, several bool) string {
	if ns == "" || (!info.Namespaced && !several) {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", ns)
}
