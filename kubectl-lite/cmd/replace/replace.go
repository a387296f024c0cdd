package replace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns "replace -f": a PUT of each object as given, or with
// --force a delete and re-create.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		flags write.Flags
		force bool
	)
	cmd := &cobra.Command{
		Use:   "replace -f FILENAME",
		Short: "Replace a resource by file name or stdin",
		Long: `Replace a resource by file name or stdin.

The whole object is replaced by the manifest: fields it leaves out are
cleared. The object must exist. With --force it is deleted and re-created.`,
		Example: `  kubectl-lite replace -f ./pod.json
  kubectl-lite get pod mypod -o yaml | sed 's/v1/v2/' | kubectl-lite replace -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flags.Each(cmd.Context(), streams, g, "replace", func(c *client.Client, w *write.Writer, o manifest.Object) (string, error) {
				res, err := replaceOne(cmd.Context(), c, w, o, force)
				return res, cli.AddSource("replacing", o.Source, err)
			})
		},
	}
	flags.Bind(cmd, "replace")
	cmd.Flags().BoolVar(&force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion, then re-create them.")
	return cmd
}

// replaceOne PUTs o over the live object, or with force deletes it and
// creates o.
func replaceOne(ctx context.Context, c *client.Client, w *write.Writer, o manifest.Object, force bool) (string, error) {
	if o.Name() == "" {
		return "", errors.New("resource name may not be empty")
	}
	suffix := w.DryRun().Suffix()
	d := c.Dynamic(o.Info).Namespace(o.Namespace())
	live, err := d.Get(ctx, o.Name())
	if err != nil {
		return "", err
	}
	if force {
		if w.DryRun() == cli.DryRunNone {
			if err := d.Delete(ctx, o.Name(), nil); err != nil {
				return "", err
			}
			if err := resource.WaitGone(ctx, d, o.Name(), resource.UID(live)); err != nil {
				return "", err
			}
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			return "", fmt.Errorf("encode %s: %w", o.Name(), err)
		}
		if _, err := w.Create(ctx, o, body); err != nil {
			return "", err
		}
		return "replaced" + suffix, nil
	}
	obj := o.Object
	md, _ := obj["metadata"].(map[string]any)
	if md != nil && md["resourceVersion"] == nil {
		// Replace the version read just now, so a concurrent change is a
		// Conflict rather than lost.
		md["resourceVersion"] = live.GetResourceVersion()
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", o.Name(), err)
	}
	if err := w.Replace(ctx, o, body); err != nil {
		return "", err
	}
	return "replaced" + suffix, nil
}
