package diff

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/kubectl-lite/applyobject"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns "diff -f": the live objects against what apply
// would make of them, computed by the server with a dry run.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var f manifest.Files
	cmd := &cobra.Command{
		Use:   "diff -f FILENAME",
		Short: "Diff the live version against a would-be applied version",
		Long: `Diff configurations specified by file name or stdin between the current
online configuration, and the configuration as it would be if applied.

The output is "diff -u -N" of two directories of YAML files (LIVE and
MERGED); KUBECTL_EXTERNAL_DIFF names another program. The exit status is
0 when nothing differs, 1 when something does, and above 1 when kubectl-lite
or diff failed.`,
		Example: `  kubectl-lite diff -f deploy.yaml
  cat service.yaml | kubectl-lite diff -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			objs, err := f.Objects(cmd.Context(), streams, g)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "kubectl-lite-diff-")
			if err != nil {
				return fmt.Errorf("diff: %w", err)
			}
			defer os.RemoveAll(dir)
			live, merged := filepath.Join(dir, "LIVE"), filepath.Join(dir, "MERGED")
			for _, d := range []string{live, merged} {
				if err := os.Mkdir(d, 0o700); err != nil {
					return fmt.Errorf("diff: %w", err)
				}
			}
			ctx := cmd.Context()
			for _, o := range objs {
				name := fileName(o)
				cur, err := c.Dynamic(o.Info).Namespace(o.Namespace()).Get(ctx, o.Name())
				switch {
				case apierrors.IsNotFound(err):
				case err != nil:
					return err
				default:
					if err := writeYAML(filepath.Join(live, name), cur.Object); err != nil {
						return err
					}
				}
				w := write.New(c, cli.DryRunServer)
				if _, err := applyobject.ClientSide(ctx, c, w, o, io.Discard); err != nil {
					return err
				}
				var after map[string]any
				if err := json.Unmarshal(w.Result(), &after); err != nil {
					return fmt.Errorf("decode the dry-run result of %s: %w", o.Name(), err)
				}
				if err := writeYAML(filepath.Join(merged, name), after); err != nil {
					return err
				}
			}
			prog := []string{"diff", "-u", "-N"}
			if ext := strings.Fields(os.Getenv("KUBECTL_EXTERNAL_DIFF")); len(ext) > 0 {
				prog = ext
			}
			run := exec.CommandContext(ctx, prog[0], append(prog[1:], live, merged)...)
			run.Stdout, run.Stderr = streams.Out, streams.ErrOut
			err = run.Run()
			var ee *exec.ExitError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &ee) && ee.ExitCode() == 1:
				// Differences found: diff said so, the exit code tells.
				return &cli.ExitError{Code: 1}
			case errors.As(err, &ee):
				fmt.Fprintf(streams.ErrOut, "error: exit status %d\n", ee.ExitCode())
				return &cli.ExitError{Code: ee.ExitCode()}
			}
			return fmt.Errorf("failed to run %q: %w", prog[0], err)
		},
	}
	f.Bind(cmd, "The files that contain the configurations to diff.")
	return cmd
}

// fileName is kubectl diff's file name: group.version.Kind.namespace.name.
func fileName(o manifest.Object) string {
	gv := strings.ReplaceAll(o.Info.GroupVersion(), "/", ".")
	parts := []string{gv, o.Info.Kind}
	if o.Namespace() != "" {
		parts = append(parts, o.Namespace())
	}
	return strings.Join(append(parts, o.Name()), ".")
}

// writeYAML writes obj as YAML without its managedFields, as kubectl diff.
func writeYAML(path string, obj map[string]any) error {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, y, 0o600)
}
