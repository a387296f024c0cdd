package create

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns "create -f", with the "create KIND NAME" generators
// as its subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		flags      write.Flags
		saveConfig bool
	)
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create a resource from a file or from stdin",
		Long:  "Create a resource from a file or from stdin. JSON and YAML formats are accepted; an existing object is an error.",
		Example: `  kubectl-lite create -f ./pod.yaml
  cat pod.json | kubectl-lite create -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return flags.Each(cmd.Context(), streams, g, "create", func(_ *client.Client, w *write.Writer, o manifest.Object) (string, error) {
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
				return "created" + w.DryRun().Suffix(), nil
			})
		},
	}
	flags.Bind(cmd, "create")
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
