package get

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// NewEventsCommand returns "events": the events of a namespace (or of one
// object with --for), oldest first, as kubectl events prints them.
func NewEventsCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		allNamespaces, watching, noHeaders bool
		forObject, output                  string
		types                              []string
	)
	cmd := &cobra.Command{
		Use:   "events [(-o|--output=)json|yaml|name|wide] [--for TYPE/NAME] [--watch] [--types=Normal,Warning]",
		Short: "List events",
		Long: `Display events, sorted by time, oldest first.

--for limits them to one object's, --types to some types (Normal, Warning),
-w streams new ones.`,
		Example: `  kubectl-lite events
  kubectl-lite events --all-namespaces
  kubectl-lite events --for pod/web-pod-13je7 --watch
  kubectl-lite events --types=Warning,Normal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, t := range types {
				if !strings.EqualFold(t, "Normal") && !strings.EqualFold(t, "Warning") {
					return fmt.Errorf("valid --types are Normal or Warning")
				}
			}
			p, err := newPrinter(streams.Out, output)
			if err != nil {
				return err
			}
			p.noHeaders, p.withNS = noHeaders, allNamespaces
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			if allNamespaces {
				ns = ""
			}
			var fs []string
			if forObject != "" {
				sel, err := g.Parse(cmd.Context(), []string{forObject}, ns, false)
				if err != nil {
					return err
				}
				if len(sel.Refs) != 1 {
					return errors.New("--for must be TYPE/NAME")
				}
				r := sel.Refs[0]
				fs = append(fs, "involvedObject.kind="+r.Info.Kind, "involvedObject.name="+r.Name)
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			info, _ := api.FindResource("events")
			d := c.Dynamic(info).Namespace(ns)
			lo := client.ListOptions{FieldSelector: strings.Join(fs, ",")}
			l, err := d.List(cmd.Context(), lo)
			if err != nil {
				return err
			}
			keep := func(o printers.Obj) bool {
				if len(types) == 0 {
					return true
				}
				t, _ := o["type"].(string)
				for _, want := range types {
					if strings.EqualFold(t, want) {
						return true
					}
				}
				return false
			}
			var items []printers.Obj
			for _, u := range l.Items {
				if keep(u.Object) {
					items = append(items, u.Object)
				}
			}
			o := options{}
			if err := o.sort(info, items); err != nil {
				return err
			}
			table := p.format == "" || p.format == "wide"
			switch {
			case len(items) == 0 && !watching:
				fmt.Fprintln(streams.ErrOut, noResources(ns, !info.Namespaced))
			case table && len(items) > 0:
				if err := p.printEvents(items); err != nil {
					return err
				}
			case p.batch() && !watching:
				if err := p.printAll(items, true); err != nil {
					return err
				}
			case len(items) > 0:
				for _, it := range items {
					if err := p.printWatched(info, it); err != nil {
						return err
					}
				}
			}
			if !watching {
				return nil
			}
			lo.ResourceVersion = l.ListMeta.ResourceVersion
			if table {
				p.eventsTable = true
			}
			return watchFiltered(cmd, d, p, info, lo, keep)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolVarP(&watching, "watch", "w", false, "After listing the requested events, watch for more events.")
	f.BoolVar(&noHeaders, "no-headers", false, "When using the default output format, don't print headers.")
	f.StringVar(&forObject, "for", "", "Filter events to only those pertaining to the specified resource.")
	f.StringVarP(&output, "output", "o", "", "Output format. One of: (json, yaml, name, jsonpath, custom-columns, wide).")
	f.StringSliceVar(&types, "types", nil, "Output only events of given types.")
	return cmd
}

// printEvents writes events as kubectl events' table, which kubectl
// prints itself (it asks for no server table): LAST SEEN, TYPE, REASON,
// OBJECT as the API writes the kind ("Deployment/web"), MESSAGE.
func (p *printer) printEvents(items []printers.Obj) error {
	if p.tables == nil {
		p.tables = printers.NewTablePrinter(p.tw, printers.TableOptions{WithNamespace: p.withNS, NoHeaders: p.noHeaders})
	}
	now := time.Now()
	t := &api.Table{ColumnDefinitions: []api.TableColumnDefinition{
		{Name: "Last Seen", Type: "string"}, {Name: "Type", Type: "string"}, {Name: "Reason", Type: "string"},
		{Name: "Object", Type: "string"}, {Name: "Message", Type: "string"},
	}}
	for _, e := range items {
		str := func(path ...string) string {
			var cur any = e
			for _, k := range path {
				m, _ := cur.(map[string]any)
				cur = m[k]
			}
			s, _ := cur.(string)
			return s
		}
		lastSeen := "<unknown>"
		for _, path := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"metadata", "creationTimestamp"}} {
			if ts, err := time.Parse(time.RFC3339, str(path...)); err == nil {
				lastSeen = printers.HumanDuration(now.Sub(ts))
				break
			}
		}
		obj, _ := json.Marshal(e)
		t.Rows = append(t.Rows, api.TableRow{Object: obj, Cells: []any{lastSeen, str("type"), str("reason"),
			str("involvedObject", "kind") + "/" + str("involvedObject", "name"), strings.TrimSpace(str("message"))}})
	}
	return p.printTable(t, "")
}
