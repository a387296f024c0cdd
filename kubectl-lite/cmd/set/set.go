package set

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// NewCommand returns the set command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set SUBCOMMAND",
		Short: "Set specific features on objects",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newImage(streams, g), newEnv(streams, g))
	return cmd
}

func newImage(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		selector string
		all      bool
		record   bool
	)
	cmd := &cobra.Command{
		Use:   "image (TYPE NAME | TYPE/NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		Short: "Update the image of a pod template",
		Long:  "Update existing container image(s) of resources. '*' as the container name sets the image of every container.",
		Example: `  kubectl-lite set image deployment/web app=busybox:1.36
  kubectl-lite set image deployments,rs -l app=web '*=busybox:1.36'`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var resArgs []string
			images := map[string]string{}
			for _, a := range args {
				if name, img, ok := strings.Cut(a, "="); ok {
					if name == "" || img == "" {
						return fmt.Errorf("invalid image %s", a)
					}
					images[name] = img
					continue
				}
				resArgs = append(resArgs, a)
			}
			if len(images) == 0 {
				return fmt.Errorf("at least one image update is required")
			}
			ctx := cmd.Context()
			c, refs, err := g.Select(ctx, resArgs, selector, all)
			if err != nil {
				return err
			}
			for _, r := range refs {
				changed, err := editPodSpec(ctx, c, r, func(u *client.Unstructured, spec map[string]any) (bool, error) {
					for name, img := range images {
						if !setImage(spec, name, img) {
							return false, fmt.Errorf("unable to find container named %q", name)
						}
					}
					if record {
						md, _ := u.Object["metadata"].(map[string]any)
						ann, _ := md["annotations"].(map[string]any)
						if ann == nil {
							ann = map[string]any{}
							md["annotations"] = ann
						}
						ann[api.ChangeCauseAnnotation] = cli.RecordedCommand()
					}
					return true, nil
				})
				if err != nil {
					return err
				}
				if !changed {
					continue
				}
				fmt.Fprintf(streams.Out, "%s image updated\n", r)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&all, "all", false, "Select all resources, in the namespace of the specified resource types")
	f.BoolVar(&record, "record", false, "Record current kubectl command in the resource annotation (kubernetes.io/change-cause).")
	return cmd
}

// editPodSpec reads r, lets edit change the object and its pod spec in
// place, and sends what changed as a strategic merge patch. It sends
// nothing when edit returns false or nothing changed; changed says whether
// a patch went out.
func editPodSpec(ctx context.Context, c *client.Client, r resource.Ref, edit func(u *client.Unstructured, spec map[string]any) (bool, error)) (changed bool, err error) {
	d := c.Dynamic(r.Info).Namespace(r.Namespace)
	u, err := d.Get(ctx, r.Name)
	if err != nil {
		return false, err
	}
	original, err := json.Marshal(u)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", r, err)
	}
	spec := podSpec(u.Object)
	if spec == nil {
		return false, fmt.Errorf("%s has no pod template", r)
	}
	if send, err := edit(u, spec); err != nil || !send {
		return false, err
	}
	modified, err := json.Marshal(u)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", r, err)
	}
	p, err := patch.CreateStrategicMergePatch(original, modified, patch.KubernetesSchema(r.Info.Kind))
	if err != nil {
		return false, fmt.Errorf("create patch for %s: %w", r, err)
	}
	if string(p) == "{}" {
		return false, nil
	}
	if _, err := d.Patch(ctx, r.Name, client.StrategicMergePatchType, p); err != nil {
		return false, err
	}
	return true, nil
}

// podSpec returns the pod spec of a pod or the template's of a workload.
func podSpec(obj map[string]any) map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	if kind, _ := obj["kind"].(string); kind == "Pod" {
		return spec
	}
	tmpl, _ := spec["template"].(map[string]any)
	ps, _ := tmpl["spec"].(map[string]any)
	return ps
}

// setImage sets the image of container name (any with "*") among the
// containers and init containers; it reports whether one matched.
func setImage(spec map[string]any, name, image string) bool {
	found := false
	for _, field := range []string{"initContainers", "containers"} {
		cs, _ := spec[field].([]any)
		for _, c := range cs {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			if name == "*" || m["name"] == name {
				m["image"] = image
				found = true
			}
		}
	}
	return found
}
