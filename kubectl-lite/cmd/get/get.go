package get

import (
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

// allTypes is what "get all" expands to, as in kubectl's "all" category,
// limited to the kinds minik8s serves.
var allTypes = []string{"pods", "services", "daemonsets", "deployments", "replicasets", "statefulsets", "jobs", "cronjobs"}

type options struct {
	allNamespaces bool
	selector      string
	fieldSelector string
	output        string
}

// NewCommand returns the get command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...]",
		Short: "Display one or many resources",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, g, args)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.")
	f.StringVarP(&o.output, "output", "o", "", "Output format. One of: (json, yaml, name, wide).")
	return cmd
}

// Resolve turns "po,deploy" or "all" into resources, with kubectl's error
// for an unknown type.
func Resolve(typeArg string) ([]api.ResourceInfo, error) {
	var out []api.ResourceInfo
	for _, t := range strings.Split(typeArg, ",") {
		if t == "all" {
			for _, a := range allTypes {
				if info, ok := api.FindResource(a); ok {
					out = append(out, info)
				}
			}
			continue
		}
		info, ok := api.FindResource(t)
		if !ok {
			return nil, fmt.Errorf("the server doesn't have a resource type %q", t)
		}
		out = append(out, info)
	}
	return out, nil
}

func (o *options) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	switch o.output {
	case "", "wide", "yaml", "json", "name":
	default:
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", o.output)
	}
	infos, err := Resolve(args[0])
	if err != nil {
		return err
	}
	names := args[1:]
	if len(names) > 0 && o.selector != "" {
		return errors.New("name cannot be provided when a selector is specified")
	}
	if len(names) > 0 && len(infos) > 1 {
		return errors.New("you must specify only one resource type when naming objects")
	}
	ns, err := g.DefaultNamespace()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		ns = ""
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	withKind := len(infos) > 1
	var (
		firstErr error
		all      []printers.Obj
		printed  bool
	)
	for _, info := range infos {
		d := c.Dynamic(info).Namespace(ns)
		var items []printers.Obj
		if len(names) > 0 {
			for _, n := range names {
				u, err := d.Get(ctx, n)
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				items = append(items, u.Object)
			}
		} else {
			l, err := d.List(ctx, client.ListOptions{LabelSelector: o.selector, FieldSelector: o.fieldSelector})
			if err != nil {
				return err
			}
			for _, u := range l.Items {
				items = append(items, u.Object)
			}
		}
		if len(items) == 0 {
			continue
		}
		switch o.output {
		case "yaml", "json":
			all = append(all, items...)
		case "name":
			for _, it := range items {
				md, _ := it["metadata"].(map[string]any)
				fmt.Fprintf(streams.Out, "%s/%v\n", printers.ResourceName(info.Kind, info.Group), md["name"])
			}
		default:
			if printed {
				fmt.Fprintln(streams.Out)
			}
			err := printers.PrintTable(streams.Out, items, printers.Options{
				Wide: o.output == "wide", WithNamespace: o.allNamespaces && info.Namespaced,
				WithKind: withKind, Kind: info.Kind, Group: info.Group, Now: time.Now(),
			})
			if err != nil {
				return err
			}
		}
		printed = true
	}
	if o.output == "yaml" || o.output == "json" {
		if len(all) > 0 || len(names) == 0 {
			asList := len(names) != 1 || len(infos) != 1
			if err := printers.PrintObjects(streams.Out, o.output, all, asList); err != nil {
				return err
			}
		}
		return firstErr
	}
	if !printed && firstErr == nil {
		fmt.Fprintln(streams.ErrOut, noResources(ns, infos))
	}
	return firstErr
}

// noResources is kubectl's message for an empty result.
func noResources(ns string, infos []api.ResourceInfo) string {
	namespaced := false
	for _, i := range infos {
		namespaced = namespaced || i.Namespaced
	}
	if ns == "" || !namespaced {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", ns)
}
