package version

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	iversion "github.com/minik8s/minik8s/internal/version"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// NewCommand returns the version command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server version information",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(streams.Out, "Client Version: %s\n", iversion.Get().GitVersion)
			if clientOnly {
				return nil
			}
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
			fmt.Fprintf(streams.Out, "Server Version: %s\n", info.GitVersion)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	return cmd
}
