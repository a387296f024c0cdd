package version

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/internal/client"
	iversion "github.com/minik8s/minik8s/internal/version"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// NewCommand returns the version command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		clientOnly bool
		output     string
	)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server version information",
		Long:  "Print the client and server version information for the current context.",
		Example: `  kubectl-lite version
  kubectl-lite version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return errors.New("--output must be 'yaml' or 'json'")
			}
			cv := iversion.Get()
			v := versions{ClientVersion: &cv}
			var serverErr error
			if !clientOnly {
				serverErr = func() error {
					c, err := g.Client()
					if err != nil {
						return err
					}
					b, err := c.Do(cmd.Context(), client.Request{Path: "/version"})
					if err != nil {
						return err
					}
					var info iversion.Info
					if err := json.Unmarshal(b, &info); err != nil {
						return fmt.Errorf("decode server version: %w", err)
					}
					v.ServerVersion = &info
					return nil
				}()
			}
			switch output {
			case "json":
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return fmt.Errorf("encode version: %w", err)
				}
				fmt.Fprintf(streams.Out, "%s\n", b)
			case "yaml":
				b, err := yaml.Marshal(v)
				if err != nil {
					return fmt.Errorf("encode version: %w", err)
				}
				streams.Out.Write(b)
			default:
				fmt.Fprintf(streams.Out, "Client Version: %s\n", cv.GitVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(streams.Out, "Server Version: %s\n", v.ServerVersion.GitVersion)
				}
			}
			return serverErr
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}

// versions is kubectl's "version -o json" document.
type versions struct {
	ClientVersion *iversion.Info `json:"clientVersion,omitempty"`
	ServerVersion *iversion.Info `json:"serverVersion,omitempty"`
}
