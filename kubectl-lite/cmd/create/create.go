package create

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns "create -f", with the "create KIND NAME" generators
// as its subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		f          manifest.Files
		dryRun     cli.DryRun
		saveConfig bool
		output     string
	)
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create a resource from a file or from stdin",
		Long:  "Create a resource from a file or from stdin. JSON and YAML formats are accepted; an existing object is an error.",
		Example: `  kubectl-lite create -f ./pod.yaml
  cat pod.json | kubectl-lite create -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dryRun.Validate(); err != nil {
				return err
			}
			if err := write.ValidOutput(output); err != nil {
				return err
			}
			objs, err := f.Objects(streams, g)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			w := write.New(c, dryRun)
			return write.Each(streams, "create", objs, output, w, func(o manifest.Object) (string, error) {
				if saveConfig {
					if err := setLastApplied(o); err != nil {
						return "", err
					}
				}
				body, err := json.Marshal(o.Object)
				if err != nil {
					return "", fmt.Errorf("encode %s: %w", o.Name(), err)
				}
				name, err := w.Create(cmd.Context(), o, body)
				if err != nil {
					return "", cli.AddSource("creating", o.Source, err)
				}
				if name != "" {
					o.SetName(name)
				}
				return "created" + dryRun.Suffix(), nil
			})
		},
	}
	f.Bind(cmd, "The files that contain the configurations to create.")
	dryRun.Bind(cmd)
	write.BindOutput(cmd, &output)
	addGenerators(cmd, streams, g)
	cmd.Flags().BoolVar(&saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation. Otherwise, the annotation will be unchanged. This flag is useful when you want to perform kubectl apply on this object in the future.")
	return cmd
}

// setLastApplied records o in its own last-applied annotation (--save-config),
// in place: o.Object stays the same map, so Each prints the object sent.
func setLastApplied(o manifest.Object) error {
	b, err := manifest.WithLastApplied(o.Object)
	if err != nil {
		return err
	}
	var withAnn map[string]any
	if err := json.Unmarshal(b, &withAnn); err != nil {
		return fmt.Errorf("encode %s: %w", o.Name(), err)
	}
	clear(o.Object)
	maps.Copy(o.Object, withAnn)
	return nil
}
