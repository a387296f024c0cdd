package apply

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// LastAppliedAnnotation holds the manifest last applied, the "original" of
// the next three-way merge.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Files are the -f and -R flags of the verbs reading manifests.
type Files struct {
	Filenames []string
	Recursive bool
}

func (f *Files) bind(cmd *cobra.Command, what string) {
	cmd.Flags().StringSliceVarP(&f.Filenames, "filename", "f", nil, "The files that contain the configurations to "+what+".")
	cmd.Flags().BoolVarP(&f.Recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively.")
}

// NewCommand returns the apply command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		f      Files
		dryRun string
	)
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to a resource by file name or stdin",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dryRun != "none" && dryRun != "client" {
				return fmt.Errorf(`invalid dry-run value (%s). Must be "none" or "client"`, dryRun)
			}
			objs, err := Objects(streams, g, f)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			return each(streams, objs, func(o manifest.Object) (string, error) {
				return applyOne(cmd, c, o, dryRun == "client")
			})
		},
	}
	f.bind(cmd, "apply")
	cmd.Flags().StringVar(&dryRun, "dry-run", "none", `Must be "none" or "client". With "client", only print the object that would be sent.`)
	return cmd
}

// NewCreateCommand returns "create -f".
func NewCreateCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var f Files
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create a resource from a file or from stdin",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			objs, err := Objects(streams, g, f)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			return each(streams, objs, func(o manifest.Object) (string, error) {
				if _, err := c.Dynamic(o.Info).Create(cmd.Context(), &client.Unstructured{Object: o.Object}); err != nil {
					return "", err
				}
				return "created", nil
			})
		},
	}
	f.bind(cmd, "create")
	return cmd
}

// Objects reads the -f objects and gives namespaced ones the namespace of
// -n or the context, refusing a manifest namespace that contradicts -n.
func Objects(streams cli.Streams, g *cli.Globals, f Files) ([]manifest.Object, error) {
	objs, err := manifest.Read(f.Filenames, f.Recursive, streams.In)
	if err != nil {
		return nil, err
	}
	ns, err := g.DefaultNamespace()
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if !o.Info.Namespaced {
			continue
		}
		switch {
		case o.Namespace() == "":
			o.SetNamespace(ns)
		case g.Namespace != "" && o.Namespace() != g.Namespace:
			return nil, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
				o.Namespace(), g.Namespace, o.Namespace())
		}
	}
	return objs, nil
}

// each runs fn on every object, printing "kind.group/name RESULT" for
// successes. It goes on after a failure, as kubectl does, so the output
// says which objects were changed; every failure but the last is printed
// here and the last is returned for the exit path.
func each(streams cli.Streams, objs []manifest.Object, fn func(manifest.Object) (string, error)) error {
	var last error
	for _, o := range objs {
		result, err := fn(o)
		if err != nil {
			if last != nil {
				fmt.Fprintln(streams.ErrOut, cli.FormatError(last))
			}
			last = err
			continue
		}
		fmt.Fprintf(streams.Out, "%s/%s %s\n", printers.ResourceName(o.Info.Kind, o.Info.Group), o.Name(), result)
	}
	return last
}

// applyOne creates o when missing, else patches the live object with the
// three-way merge of last-applied, o and live.
func applyOne(cmd *cobra.Command, c *client.Client, o manifest.Object, dryRun bool) (string, error) {
	suffix := ""
	if dryRun {
		suffix = " (dry run)"
	}
	modified, err := withLastApplied(o.Object)
	if err != nil {
		return "", err
	}
	d := c.Dynamic(o.Info).Namespace(o.Namespace())
	ctx := cmd.Context()
	live, err := d.Get(ctx, o.Name())
	if apierrors.IsNotFound(err) {
		if !dryRun {
			var obj client.Unstructured
			if err := json.Unmarshal(modified, &obj); err != nil {
				return "", fmt.Errorf("decode %s: %w", o.Name(), err)
			}
			if _, err := d.Create(ctx, &obj); err != nil {
				return "", err
			}
		}
		return "created" + suffix, nil
	}
	if err != nil {
		return "", err
	}
	current, err := json.Marshal(live)
	if err != nil {
		return "", fmt.Errorf("encode live %s: %w", o.Name(), err)
	}
	original := []byte("{}")
	if md, ok := live.Object["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if s, ok := ann[LastAppliedAnnotation].(string); ok && s != "" {
				original = []byte(s)
			}
		}
	}
	p, err := patch.CreateThreeWayStrategicMergePatch(original, modified, current, patch.KubernetesSchema(o.Info.Kind))
	if err != nil {
		return "", fmt.Errorf("creating patch with:\noriginal:\n%s\nmodified:\n%s\ncurrent:\n%s\nfor: %q: %w", original, modified, current, o.Source, err)
	}
	if isEmptyPatch(p) {
		return "unchanged" + suffix, nil
	}
	if !dryRun {
		if _, err := d.Patch(ctx, o.Name(), client.StrategicMergePatchType, p); err != nil {
			return "", err
		}
	}
	return "configured" + suffix, nil
}

// withLastApplied returns obj as JSON with the last-applied annotation set
// to obj itself (without that annotation), as kubectl stores it.
func withLastApplied(obj map[string]any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	var cp map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("copy manifest: %w", err)
	}
	md, _ := cp["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		cp["metadata"] = md
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann != nil {
		delete(ann, LastAppliedAnnotation)
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	last, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if ann == nil {
		ann = map[string]any{}
	}
	ann[LastAppliedAnnotation] = string(last) + "\n"
	md["annotations"] = ann
	return json.Marshal(cp)
}

func isEmptyPatch(p []byte) bool {
	var m map[string]any
	return json.Unmarshal(p, &m) == nil && len(m) == 0
}
