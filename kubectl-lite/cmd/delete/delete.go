package delete

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/apply"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/get"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

type options struct {
	filenames   []string
	recursive   bool
	selector    string
	all         bool
	gracePeriod int64
	ignoreNF    bool
}

// NewCommand returns the delete command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "delete ([-f FILENAME] | TYPE [(NAME | -l label | --all)])",
		Short: "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, g, args)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.filenames, "filename", "f", nil, "containing the resource to delete.")
	f.BoolVarP(&o.recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&o.all, "all", false, "Delete all resources, in the namespace of the specified resource types.")
	f.Int64Var(&o.gracePeriod, "grace-period", -1, "Period of time in seconds given to the resource to terminate gracefully. Ignored if negative.")
	f.BoolVar(&o.ignoreNF, "ignore-not-found", false, "Treat \"resource not found\" as a successful delete.")
	return cmd
}

type target struct {
	info      api.ResourceInfo
	namespace string
	name      string
}

func (o *options) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	var targets []target
	ctx := cmd.Context()
	c, err := g.Client()
	if err != nil {
		return err
	}
	switch {
	case len(o.filenames) > 0:
		if len(args) > 0 {
			return errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
		}
		objs, err := apply.Objects(streams, g, apply.Files{Filenames: o.filenames, Recursive: o.recursive})
		if err != nil {
			return err
		}
		for _, ob := range objs {
			targets = append(targets, target{ob.Info, ob.Namespace(), ob.Name()})
		}
	case len(args) == 0:
		return errors.New("You must provide one or more resources by argument or filename.")
	default:
		infos, err := get.Resolve(args[0])
		if err != nil {
			return err
		}
		ns, err := g.DefaultNamespace()
		if err != nil {
			return err
		}
		names := args[1:]
		if len(names) == 0 && o.selector == "" && !o.all {
			return errors.New("resource(s) were provided, but no name was specified")
		}
		for _, info := range infos {
			if !info.Namespaced {
				ns = ""
			}
			if len(names) > 0 {
				for _, n := range names {
					targets = append(targets, target{info, ns, n})
				}
				continue
			}
			l, err := c.Dynamic(info).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: o.selector})
			if err != nil {
				return err
			}
			for _, u := range l.Items {
				targets = append(targets, target{info, ns, u.GetName()})
			}
		}
		if len(targets) == 0 {
			fmt.Fprintln(streams.ErrOut, "No resources found")
			return nil
		}
	}
	var opts *api.DeleteOptions
	if o.gracePeriod >= 0 {
		gp := o.gracePeriod
		opts = &api.DeleteOptions{GracePeriodSeconds: &gp}
	}
	var last error
	for _, t := range targets {
		err := c.Dynamic(t.info).Namespace(t.namespace).Delete(ctx, t.name, opts)
		if err != nil {
			if o.ignoreNF && apierrors.IsNotFound(err) {
				continue
			}
			if last != nil {
				fmt.Fprintln(streams.ErrOut, cli.FormatError(last))
			}
			last = err
			continue
		}
		fmt.Fprintf(streams.Out, "%s %q deleted\n", printers.ResourceName(t.info.Kind, t.info.Group), t.name)
	}
	return last
}
