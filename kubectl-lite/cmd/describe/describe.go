package describe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/describers"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// NewCommand returns the describe command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		selector      string
		allNamespaces bool
		showEvents    bool
		files         manifest.Files
	)
	cmd := &cobra.Command{
		Use:   "describe (TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		Short: "Show details of a specific resource or group of resources",
		Long: `Show details of a specific resource or group of resources.

Prints a detailed description of the selected resources, including related
resources such as events or controllers. A NAME_PREFIX describes every
object whose name starts with it when no object has that exact name.`,
		Example: `  kubectl-lite describe pod web-1
  kubectl-lite describe deployment/web
  kubectl-lite describe nodes
  kubectl-lite describe pods -l app=web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			if allNamespaces {
				ns = ""
			}
			if len(files.Filenames) == 0 && len(args) == 0 {
				return errors.New("You must specify the type of resource to describe. Use \"kubectl-lite api-resources\" for a complete list of supported resources.")
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			var sel resource.Selection
			switch {
			case len(files.Filenames) > 0:
				if len(args) > 0 {
					return errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
				}
				var err error
				if sel.Refs, err = files.Refs(cmd.Context(), streams, g); err != nil {
					return err
				}
			default:
				// Kinds the built-in table does not know (custom
				// resources) are found through discovery, as kubectl does.
				if sel, err = g.Parse(cmd.Context(), args, ns, true); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			var objs []*client.Unstructured
			// A missing name is reported and the others still described,
			// as kubectl does; the last error is the exit status.
			failures := cli.Failures{Out: streams.ErrOut}
			var notFound error
			nfailed := 0
			for _, r := range sel.Refs {
				if r.Info.Namespaced && r.Namespace == "" {
					return errors.New("a resource cannot be retrieved by name across all namespaces")
				}
				u, err := c.Dynamic(r.Info).Namespace(r.Namespace).Get(ctx, r.Name)
				if err != nil {
					if apierrors.IsNotFound(err) {
						notFound = err
					}
					nfailed++
					failures.Add(err)
					continue
				}
				objs = append(objs, u)
			}
			for _, info := range sel.Types {
				l, err := c.Dynamic(info).Namespace(nsFor(info, ns)).List(ctx, client.ListOptions{LabelSelector: selector})
				if err != nil {
					return err
				}
				for i := range l.Items {
					objs = append(objs, &l.Items[i])
				}
			}
			// kubectl shows events for one object only, unless
			// --show-events is given.
			if (failures.Last() != nil || len(objs) > 1) && !cmd.Flags().Changed("show-events") {
				showEvents = false
			}
			// Two arguments and one of them not found: kubectl takes them
			// as "TYPE NAME_PREFIX" and describes every object whose name
			// starts with NAME_PREFIX, each followed by a blank line. As
			// "TYPE/NAME TYPE/NAME" nothing matches: only the error shows.
			if notFound != nil && nfailed == 1 && len(args) == 2 && len(sel.Refs) == 2 {
				return notFound
			}
			if notFound != nil && nfailed == 1 && len(args) == 2 && len(sel.Refs) == 1 {
				matches, err := withPrefix(ctx, c, sel.Refs[0])
				if err != nil {
					return err
				}
				if len(matches) == 0 {
					return notFound
				}
				for _, u := range matches {
					if err := describers.Describe(ctx, streams.Out, c, u, showEvents, time.Now()); err != nil {
						return err
					}
					fmt.Fprintln(streams.Out)
				}
				return nil
			}
			if len(objs) == 0 && failures.Last() != nil {
				return failures.Last()
			}
			if len(objs) == 0 {
				clusterScoped := len(sel.Types) > 0
				for _, info := range sel.Types {
					clusterScoped = clusterScoped && !info.Namespaced
				}
				if ns == "" || clusterScoped {
					fmt.Fprintln(streams.ErrOut, "No resources found")
				} else {
					fmt.Fprintf(streams.ErrOut, "No resources found in %s namespace.\n", ns)
				}
				return nil
			}
			for i, u := range objs {
				if i > 0 {
					fmt.Fprintln(streams.Out)
					fmt.Fprintln(streams.Out)
				}
				if err := describers.Describe(ctx, streams.Out, c, u, showEvents, time.Now()); err != nil {
					return err
				}
			}
			return failures.Last()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolVar(&showEvents, "show-events", true, "If true, display events related to the described object.")
	files.Bind(cmd, "Filename, directory, or URL to files containing the resource to describe")
	return cmd
}

func nsFor(info api.ResourceInfo, ns string) string {
	if info.Namespaced {
		return ns
	}
	return ""
}

// withPrefix lists the objects of r's kind whose names start with r's
// name.
func withPrefix(ctx context.Context, c *client.Client, r resource.Ref) ([]*client.Unstructured, error) {
	l, err := c.Dynamic(r.Info).Namespace(r.Namespace).List(ctx, client.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*client.Unstructured
	for i := range l.Items {
		if strings.HasPrefix(l.Items[i].GetName(), r.Name) {
			out = append(out, &l.Items[i])
		}
	}
	return out, nil
}
