package scale

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// NewCommand returns the scale command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		replicas, current int32
		selector          string
		all               bool
		files             []string
	)
	cmd := &cobra.Command{
		Use:   "scale [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME)",
		Short: "Set a new size for a deployment, replica set, replication controller, or stateful set",
		Long: `Set a new size for a deployment, replica set, replication controller, or stateful set.

With --current-replicas the size is changed only if the current size
matches it (a precondition checked against the /scale subresource).`,
		Example: `  kubectl-lite scale --replicas=3 deployment/web
  kubectl-lite scale --current-replicas=2 --replicas=3 deployment/web
  kubectl-lite scale --replicas=0 rs -l app=web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("replicas") {
				return errors.New(`required flag(s) "replicas" not set`)
			}
			if replicas < 0 {
				return errors.New("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var refs []resource.Ref
			if len(files) > 0 {
				var err error
				if refs, err = (manifest.Files{Filenames: files}).Refs(cmd.Context(), streams, g); err != nil {
					return err
				}
			} else {
				sel, err := g.Parse(cmd.Context(), args, ns, selector != "" || all)
				if err != nil {
					return err
				}
				if refs, err = sel.Expand(ctx, c, ns, client.ListOptions{LabelSelector: selector}); err != nil {
					return err
				}
			}
			for _, r := range refs {
				// A kind without the subresource gets the server's 404,
				// as kubectl sends the request regardless.
				sub := c.Dynamic(r.Info).Namespace(r.Namespace).Subresource(r.Name, "scale")
				if cmd.Flags().Changed("current-replicas") {
					var s api.Scale
					if err := sub.Get(ctx, &s); err != nil {
						return err
					}
					if s.Spec.Replicas != current {
						return fmt.Errorf("Expected replicas to be %d, was %d", current, s.Spec.Replicas)
					}
					s.Spec.Replicas = replicas
					if err := sub.Put(ctx, &s, nil); err != nil {
						return err
					}
				} else {
					p := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
					if err := sub.Patch(ctx, client.MergePatchType, p, nil); err != nil {
						return err
					}
				}
				fmt.Fprintf(streams.Out, "%s scaled\n", r)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Int32Var(&replicas, "replicas", 0, "The new desired number of replicas. Required.")
	f.Int32Var(&current, "current-replicas", -1, "Precondition for current size. Requires that the current size of the resource match this value in order to scale.")
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&all, "all", false, "Select all resources in the namespace of the specified resource types")
	f.StringSliceVarP(&files, "filename", "f", nil, "Filename, directory, or URL to files identifying the resource to set a new size")
	return cmd
}
