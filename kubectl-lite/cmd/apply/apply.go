package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns the apply command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var flags write.Flags
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to a resource by file name or stdin",
		Long: `Apply a configuration to a resource by file name or stdin.

Objects that do not exist are created. Existing ones are patched with a
three-way merge of the last applied configuration (kept in the
kubectl.kubernetes.io/last-applied-configuration annotation), the new
manifest and the live object: fields removed from the manifest are removed,
fields set by others are kept. JSON and YAML formats are accepted.`,
		Example: `  kubectl-lite apply -f ./deploy.yaml
  kubectl-lite apply -R -f ./manifests/
  cat pod.json | kubectl-lite apply -f -
  kubectl-lite apply -f deploy.yaml --dry-run=server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flags.Each(streams, g, "apply", func(c *client.Client, w *write.Writer, o manifest.Object) (string, error) {
				return One(cmd.Context(), c, w, o, streams.ErrOut)
			})
		},
	}
	flags.Bind(cmd, "apply")
	return cmd
}

// One applies o: it creates o when missing, else patches the live object
// with the three-way merge of last-applied, o and live, and says which
// ("created", "configured", "unchanged", with the dry-run suffix).
// Warnings (a live object without the last-applied annotation) go to warn.
func One(ctx context.Context, c *client.Client, w *write.Writer, o manifest.Object, warn io.Writer) (string, error) {
	if o.Name() == "" {
		if o.GenerateName() != "" {
			return "", fmt.Errorf("from %s: cannot use generate name with apply", o.Source)
		}
		return "", errors.New("resource name may not be empty")
	}
	suffix := w.DryRun().Suffix()
	modified, err := manifest.WithLastApplied(o.Object)
	if err != nil {
		return "", err
	}
	d := c.Dynamic(o.Info).Namespace(o.Namespace())
	live, err := d.Get(ctx, o.Name())
	if apierrors.IsNotFound(err) {
		if _, err := w.Create(ctx, o, modified); err != nil {
			return "", cli.AddSource("creating", o.Source, err)
		}
		return "created" + suffix, nil
	}
	if err != nil {
		return "", cli.AddSource("retrieving current configuration of", o.Source, err)
	}
	if w.DryRun() == cli.DryRunClient {
		// As kubectl: a client dry run does not compute the patch, so an
		// existing object is always reported as configured.
		return "configured" + suffix, nil
	}
	current, err := json.Marshal(live)
	if err != nil {
		return "", fmt.Errorf("encode live %s: %w", o.Name(), err)
	}
	original := []byte("{}")
	md, _ := live.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if last, _ := ann[api.LastAppliedConfigAnnotation].(string); last != "" {
		original = []byte(last)
	} else {
		fmt.Fprintf(warn, "Warning: resource %s/%s is missing the %s annotation which is required by kubectl-lite apply. kubectl-lite apply should only be used on resources created declaratively by either kubectl-lite create --save-config or kubectl-lite apply. The missing annotation will be patched automatically.\n",
			objectResource(o.Info), o.Name(), api.LastAppliedConfigAnnotation)
	}
	p, err := patch.CreateThreeWayStrategicMergePatch(original, modified, current, patch.KubernetesSchema(o.Info.Kind))
	if err != nil {
		return "", fmt.Errorf("creating patch with:\noriginal:\n%s\nmodified:\n%s\ncurrent:\n%s\nfor: %q: %w", original, modified, current, o.Source, err)
	}
	if isEmptyPatch(p) {
		w.SetResult(current)
		return "unchanged" + suffix, nil
	}
	if err := w.Patch(ctx, o, p); err != nil {
		return "", cli.AddSource("patching", o.Source, err)
	}
	return "configured" + suffix, nil
}

// objectResource is kubectl's "resource.group" of an object name in
// messages: "deployments.apps", "pods".
func objectResource(info api.ResourceInfo) string {
	if info.Group == "" {
		return info.Resource
	}
	return info.Resource + "." + info.Group
}

func isEmptyPatch(p []byte) bool {
	var m map[string]any
	return json.Unmarshal(p, &m) == nil && len(m) == 0
}
