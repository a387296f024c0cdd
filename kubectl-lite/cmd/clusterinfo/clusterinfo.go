package clusterinfo

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// NewCommand returns the cluster-info command. Like kubectl it first checks
// the server answers, so a dead control plane is an error, not a line.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "cluster-info",
		Short: "Display addresses of the control plane",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.Client()
			if err != nil {
				return err
			}
			if _, err := c.Do(cmd.Context(), client.Request{Path: "/version"}); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Kubernetes control plane is running at %s\n", c.Host())
			fmt.Fprintf(streams.Out, "\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n")
			return nil
		},
	}
}
