package get

import (
	"context"
	"encoding/json"
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
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
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
	files         manifest.Files
	watchEvents   bool
	raw           string
	showManaged   bool
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
	f.BoolVar(&o.showManaged, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	o.files.Bind(cmd, "Filename, directory, or URL to files identifying the resource to get from a server.")
	return cmd
}

// run is one get: it reads what was asked type by type and prints it (the
// batch formats all at the end), reports the names not found, and with -w
// follows the one type or object asked for.
func (o *options) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	if o.raw != "" {
		return o.getRaw(cmd, streams, g, args)
	}
	p, err := o.printer(streams.Out)
	if err != nil {
		return err
	}
	ns, err := o.namespace(g)
	if err != nil {
		return err
	}
	sel, err := o.selection(cmd.Context(), streams, g, ns, args)
	if err != nil {
		return err
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	groups, err := o.groups(sel, ns)
	if err != nil {
		return err
	}
	p.withKind = severalKinds(groups) || o.showKind
	r := &reading{o: o, p: p, out: streams.Out, failures: cli.Failures{Out: streams.ErrOut}}
	for _, gr := range groups {
		if err := r.readAndPrint(cmd.Context(), c, gr); err != nil {
			return err
		}
	}
	if err := r.printBatch(len(sel.Refs)); err != nil {
		return err
	}
	if err := r.failures.Last(); err != nil {
		return err
	}
	if !r.printed && !o.watchOnly && !o.ignoreNF {
		clusterScoped := len(groups) == 1 && !groups[0].info.Namespaced
		fmt.Fprintln(streams.ErrOut, noResources(ns, clusterScoped))
	}
	if !o.watching() {
		return nil
	}
	return o.watchGroup(cmd, c, p, groups[0], r)
}

func (o *options) watching() bool { return o.watch || o.watchOnly }

// printer is the printer of -o with the table flags; with
// --output-watch-events a watch prints the objects listed first as ADDED
// events.
func (o *options) printer(out io.Writer) (*printer, error) {
	p, err := newPrinter(out, o.output)
	if err != nil {
		return nil, err
	}
	p.showLabels, p.noHeaders, p.withNS, p.labelColumns = o.showLabels, o.noHeaders, o.allNamespaces, o.labelColumns
	p.showManaged = o.showManaged
	if o.watchEvents && o.watching() {
		p.event = string(api.Added)
	}
	return p, nil
}

// namespace is the namespace names and lists are read in: "" (all) with
// -A.
func (o *options) namespace(g *cli.Globals) (string, error) {
	ns, err := g.DefaultNamespace()
	if err != nil || o.allNamespaces {
		return "", err
	}
	return ns, nil
}

// selection is what was asked for: the objects -f names, or those the
// arguments name or list.
func (o *options) selection(ctx context.Context, streams cli.Streams, g *cli.Globals, ns string, args []string) (resource.Selection, error) {
	var sel resource.Selection
	switch {
	case len(o.files.Filenames) > 0:
		if len(args) > 0 {
			return sel, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
		}
		refs, err := o.files.Refs(ctx, streams, g)
		if err != nil {
			return sel, err
		}
		sel.Refs = refs
	case len(args) == 0:
		return sel, errors.New("You must specify the type of resource to get. Use \"kubectl-lite api-resources\" for a complete list of supported resources.")
	default:
		var err error
		if sel, err = g.Parse(ctx, args, ns, true); err != nil {
			return sel, err
		}
	}
	if len(sel.Refs) > 0 && o.selector != "" {
		return sel, errors.New("name cannot be provided when a selector is specified")
	}
	return sel, nil
}

// severalKinds says whether the groups are of more than one kind: kubectl
// then names objects kind/name.
func severalKinds(groups []group) bool {
	for _, g := range groups {
		if g.info.Kind != groups[0].info.Kind || g.info.Group != groups[0].info.Group {
			return true
		}
	}
	return false
}

// group is what one request reads: the named objects of one resource
// type in one namespace, or (names nil) the list of that type.
type group struct {
	info  api.ResourceInfo
	ns    string
	names []string
}

// groups arranges the selection by resource type, in the order given, and
// refuses what a watch cannot follow: several types, or several names.
func (o *options) groups(sel resource.Selection, ns string) ([]group, error) {
	var groups []group
	for _, info := range sel.Types {
		groups = append(groups, group{info: info, ns: ns})
	}
	for _, r := range sel.Refs {
		if r.Info.Namespaced && r.Namespace == "" {
			return nil, errors.New("a resource cannot be retrieved by name across all namespaces")
		}
		if n := len(groups); n > 0 && groups[n-1].info.Resource == r.Info.Resource && groups[n-1].ns == r.Namespace && groups[n-1].names != nil {
			groups[n-1].names = append(groups[n-1].names, r.Name)
			continue
		}
		groups = append(groups, group{info: r.Info, ns: r.Namespace, names: []string{r.Name}})
	}
	if !o.watching() {
		return groups, nil
	}
	if len(groups) > 1 {
		return nil, errors.New("watch is only supported on individual resources and resource collections, but multiple resource types were found")
	}
	if len(groups) == 0 || len(groups[0].names) > 1 {
		n := 0
		if len(groups) > 0 {
			n = len(groups[0].names)
		}
		return nil, fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", n)
	}
	return groups, nil
}

// reading is the state of one get across its groups: what failed, what
// the batch formats print at the end, and where a watch resumes.
type reading struct {
	o   *options
	p   *printer
	out io.Writer
	// failures are the names not found: kubectl reports every one, all
	// but the last as they happen, the last on the way out.
	failures cli.Failures
	// batch holds the objects of the batch formats (yaml, json,
	// jsonpath), printed together as one List at the end.
	batch []printers.Obj
	// printed says whether anything was printed (or is in batch).
	printed bool
	// watchRV is the resourceVersion of the last object or list read, from
	// which -w resumes.
	watchRV string
}

// readAndPrint reads one group and prints it (or, for the batch formats,
// keeps it for printBatch).
func (r *reading) readAndPrint(ctx context.Context, c *client.Client, gr group) error {
	if r.p.tabular() {
		return r.readAndPrintTable(ctx, c, gr)
	}
	items, err := r.read(ctx, c, gr)
	if err != nil {
		return err
	}
	if r.o.watchOnly || len(items) == 0 {
		return nil
	}
	if err := r.o.sort(gr.info, items); err != nil {
		return err
	}
	p := r.p
	switch {
	case p.batch() && r.o.watching():
		// A watch prints objects one by one, the listed ones too.
		for _, it := range items {
			if err := p.printWatched(gr.info, it); err != nil {
				return err
			}
		}
	case p.batch():
		r.batch = append(r.batch, items...)
	default:
		if err := p.print(gr.info, items); err != nil {
			return err
		}
	}
	r.printed = true
	return nil
}

// readAndPrintTable reads one group as the server's table, as kubectl get
// asks for it, and prints it: each type's table its own, after a blank
// line unless headers are off.
func (r *reading) readAndPrintTable(ctx context.Context, c *client.Client, gr group) error {
	tables, err := r.readTables(ctx, c, gr)
	if err != nil || r.o.watchOnly {
		return err
	}
	rows := 0
	for _, t := range tables {
		rows += len(t.Rows)
		// Each table is sorted on its own, as kubectl sorts them: a
		// list's rows, not the objects named one by one.
		if r.o.sortBy != "" {
			if err := sortRows(t, r.o.sortBy); err != nil {
				return err
			}
		}
	}
	if rows == 0 {
		return nil
	}
	if r.printed && !r.o.noHeaders {
		fmt.Fprintln(r.out)
	}
	r.p.startTable(gr.info)
	r.printed = true
	for _, t := range tables {
		r.p.tables.Print(t, r.p.event)
	}
	return r.p.tw.Flush()
}

// readTables GETs each name of gr as a table, or LISTs its type as one,
// with the Accept header of kubectl get. --sort-by needs the objects in
// the rows; otherwise the server sends their metadata. A server without
// tables sends the objects, shown as kubectl shows them then (NAME, AGE).
func (r *reading) readTables(ctx context.Context, c *client.Client, gr group) ([]*api.Table, error) {
	include := api.IncludeObjectPolicy("")
	if r.o.sortBy != "" {
		include = api.IncludeObject
	}
	tc := c.Dynamic(gr.info).Namespace(gr.ns).Tables(include)
	if gr.names == nil {
		a, err := tc.List(ctx, client.ListOptions{LabelSelector: r.o.selector, FieldSelector: r.o.fieldSelector})
		if err != nil {
			return nil, err
		}
		r.watchRV = a.ResourceVersion
		return []*api.Table{tableOf(a)}, nil
	}
	var tables []*api.Table
	for _, n := range gr.names {
		a, err := tc.Get(ctx, n)
		if err != nil {
			if !(r.o.ignoreNF && apierrors.IsNotFound(err)) {
				r.failures.Add(err)
			}
			continue
		}
		tables = append(tables, tableOf(a))
		r.watchRV = a.ResourceVersion
	}
	return tables, nil
}

// tableOf is the server's table, or kubectl's NAME and AGE of the objects a
// server without tables sent.
func tableOf(a *client.TableAnswer) *api.Table {
	if a.Table != nil {
		return a.Table
	}
	items := make([]printers.Obj, len(a.Items))
	for i, u := range a.Items {
		items[i] = u.Object
	}
	return printers.MetadataTable(items, time.Now())
}

// sortRows orders a table's rows by --sort-by, evaluated on each row's
// object (the server sends whole objects when sorting).
func sortRows(t *api.Table, path string) error {
	objs := make([]printers.Obj, len(t.Rows))
	for i, row := range t.Rows {
		if err := json.Unmarshal(row.Object, &objs[i]); err != nil {
			return fmt.Errorf("sort by %s: a row without its object: %w", path, err)
		}
	}
	order, err := printers.SortOrder(objs, path)
	if err != nil {
		return err
	}
	rows := make([]api.TableRow, len(order))
	for i, k := range order {
		rows[i] = t.Rows[k]
	}
	t.Rows = rows
	return nil
}

// read GETs each name of gr, or LISTs its type with the selectors. A name
// that is missing (and not ignored) is a failure, not the end.
func (r *reading) read(ctx context.Context, c *client.Client, gr group) ([]printers.Obj, error) {
	d := c.Dynamic(gr.info).Namespace(gr.ns)
	var items []printers.Obj
	if gr.names == nil {
		l, err := d.List(ctx, client.ListOptions{LabelSelector: r.o.selector, FieldSelector: r.o.fieldSelector})
		if err != nil {
			return nil, err
		}
		r.watchRV = l.ListMeta.ResourceVersion
		for _, u := range l.Items {
			items = append(items, u.Object)
		}
		return items, nil
	}
	for _, n := range gr.names {
		u, err := d.Get(ctx, n)
		if err != nil {
			if !(r.o.ignoreNF && apierrors.IsNotFound(err)) {
				r.failures.Add(err)
			}
			continue
		}
		items = append(items, u.Object)
		r.watchRV = u.GetResourceVersion()
	}
	return items, nil
}

// printBatch prints what the batch formats kept: one object asked for by
// name as itself, anything else as a List (an empty one too, when types
// were listed). A watch has printed its objects already.
func (r *reading) printBatch(named int) error {
	if !r.p.batch() || r.o.watching() {
		return nil
	}
	if len(r.batch) == 0 && named > 0 {
		return nil
	}
	if err := r.p.printAll(r.batch, named != 1); err != nil {
		return err
	}
	r.printed = true
	return nil
}

// watchGroup follows the one group asked for from where reading left it:
// one name by a field selector on it, a list by the selectors.
func (o *options) watchGroup(cmd *cobra.Command, c *client.Client, p *printer, gr group, r *reading) error {
	if p.batch() {
		p.header = r.printed
	}
	fs := o.fieldSelector
	if len(gr.names) == 1 {
		fs = "metadata.name=" + gr.names[0]
	}
	lo := client.ListOptions{LabelSelector: o.selector, FieldSelector: fs, ResourceVersion: r.watchRV}
	d := c.Dynamic(gr.info).Namespace(gr.ns)
	if p.tabular() {
		return watchTables(cmd, d.Tables(""), p, gr.info, lo, o.watchEvents)
	}
	return watch(cmd, d, p, gr.info, lo, o.watchEvents)
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

// noResources is kubectl's message for an empty result: without a
// namespace when all namespaces were read or the one type asked for is
// cluster-scoped.
func noResources(ns string, clusterScoped bool) string {
	if ns == "" || clusterScoped {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", ns)
}
