package patch

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

var patchTypes = map[string]client.PatchType{
	"strategic": client.StrategicMergePatchType,
	"merge":     client.MergePatchType,
	"json":      client.JSONPatchType,
}

// NewCommand returns the patch command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		patch, patchFile, typ, output, subresource string
		dryRun                                     cli.DryRun
		files                                      manifest.Files
	)
	cmd := &cobra.Command{
		Use:   "patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]",
		Short: "Update fields of a resource",
		Long: `Update fields of a resource using strategic merge patch, a JSON merge
patch, or a JSON patch. JSON and YAML formats are accepted.`,
		Example: `  kubectl-lite patch node k8s-node-1 -p '{"spec":{"unschedulable":true}}'
  kubectl-lite patch deployment web -p '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"busybox:2"}]}}}}'
  kubectl-lite patch pod valid-pod --type='json' -p='[{"op": "replace", "path": "/spec/containers/0/image", "value":"new-image"}]'
  kubectl-lite patch deployment web --subresource=scale --type=merge -p '{"spec":{"replicas":2}}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			pt, ok := patchTypes[typ]
			if !ok {
				return fmt.Errorf("--type must be one of [json merge strategic], not %q", typ)
			}
			if err := dryRun.Validate(); err != nil {
				return err
			}
			if err := write.ValidOutput(output); err != nil {
				return err
			}
			if (patch == "") == (patchFile == "") {
				return errors.New("must specify --patch or --patch-file containing the contents of the patch")
			}
			body := []byte(patch)
			if patchFile != "" {
				b, err := os.ReadFile(patchFile)
				if err != nil {
					return fmt.Errorf("unable to read patch file: %w", err)
				}
				body = b
			}
			body, err := yaml.YAMLToJSON(body)
			if err != nil {
				return fmt.Errorf("unable to parse %q: %w", patch, err)
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			var refs []resource.Ref
			if len(files.Filenames) > 0 {
				var err error
				if refs, err = files.Refs(cmd.Context(), streams, g); err != nil {
					return err
				}
			} else {
				sel, err := g.Parse(cmd.Context(), args, ns, false)
				if err != nil {
					return err
				}
				refs = sel.Refs
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, r := range refs {
				d := c.Dynamic(r.Info).Namespace(r.Namespace)
				var sub []string
				if subresource != "" {
					sub = []string{subresource}
				}
				before, err := d.Get(ctx, r.Name, sub...)
				if err != nil {
					return err
				}
				result := before.Object
				if dryRun != cli.DryRunClient {
					resp, err := c.Do(ctx, client.Request{Method: http.MethodPatch, Path: client.ResourcePath(r.Info, r.Namespace, r.Name, sub...),
						Query: dryRun.Query(), Body: body, ContentType: string(pt)})
					if apierrors.IsUnsupportedMediaType(err) {
						// A strategic merge patch of a custom resource:
						// kubectl names the patch type and the kind.
						return fmt.Errorf("%s is not supported by %s/%s, Kind=%s: %s", pt, r.Info.Group, r.Info.Version, r.Info.Kind, err.Error())
					}
					if err != nil {
						return err
					}
					var after map[string]any
					if err := yaml.Unmarshal(resp, &after); err != nil {
						return fmt.Errorf("decode patched %s: %w", r, err)
					}
					result = after
				}
				switch output {
				case "name":
					fmt.Fprintln(streams.Out, r)
				case "json", "yaml":
					if err := printers.PrintObjects(streams.Out, output, []printers.Obj{result}, false); err != nil {
						return err
					}
				default:
					msg := "patched"
					md, _ := result["metadata"].(map[string]any)
					if dryRun == cli.DryRunNone && md["resourceVersion"] == before.GetResourceVersion() {
						msg = "patched (no change)"
					}
					fmt.Fprintf(streams.Out, "%s %s%s\n", r, msg, dryRun.Suffix())
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&patch, "patch", "p", "", "The patch to be applied to the resource JSON file.")
	f.StringVar(&patchFile, "patch-file", "", "A file containing a patch to be applied to the resource.")
	f.StringVar(&typ, "type", "strategic", "The type of patch being provided; one of [json merge strategic]")
	dryRun.Bind(cmd)
	write.BindOutput(cmd, &output)
	f.StringVar(&subresource, "subresource", "", "If specified, patch will operate on the subresource of the requested object. Supported subresources: status, scale.")
	files.Bind(cmd, "Filename, directory, or URL to files identifying the resource to update")
	return cmd
}
