package root

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/apiresources"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/apply"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/clusterinfo"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/completion"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/config"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/delete"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/describe"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/drain"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/edit"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/exec"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/get"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/label"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/logs"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/patch"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/rollout"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/scale"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/set"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/token"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/version"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/wait"
)

// NewCommand returns the root command with every verb wired to streams.
func NewCommand(streams cli.Streams) *cobra.Command {
	g := &cli.Globals{}
	cmd := &cobra.Command{
		Use:           "kubectl-lite",
		Short:         "kubectl-lite controls a minik8s cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	pf := cmd.PersistentFlags()
	pf.StringVar(&g.Kubeconfig, "kubeconfig", "", "Path to the kubeconfig file to use for CLI requests.")
	pf.StringVar(&g.Context, "context", "", "The name of the kubeconfig context to use")
	pf.StringVarP(&g.Namespace, "namespace", "n", "", "If present, the namespace scope for this CLI request")
	cmd.AddCommand(
		version.NewCommand(streams, g),
		clusterinfo.NewCommand(streams, g),
		config.NewCommand(streams, g),
		apiresources.NewCommand(streams, g),
		token.NewCommand(streams, g),
		get.NewCommand(streams, g),
		get.NewEventsCommand(streams, g),
		apply.NewCommand(streams, g),
		apply.NewCreateCommand(streams, g),
		apply.NewReplaceCommand(streams, g),
		apply.NewRunCommand(streams, g),
		apply.NewExposeCommand(streams, g),
		delete.NewCommand(streams, g),
		describe.NewCommand(streams, g),
		edit.NewCommand(streams, g),
		scale.NewCommand(streams, g),
		set.NewCommand(streams, g),
		patch.NewCommand(streams, g),
		label.NewLabelCommand(streams, g),
		label.NewAnnotateCommand(streams, g),
		rollout.NewCommand(streams, g),
		drain.NewCordonCommand(streams, g),
		drain.NewUncordonCommand(streams, g),
		drain.NewDrainCommand(streams, g),
		logs.NewCommand(streams, g),
		exec.NewCommand(streams, g),
		wait.NewCommand(streams, g),
		completion.NewCommand(streams),
	)
	completion.Register(cmd, g)
	return cmd
}

// Run executes the command line args and returns the process exit code: 0,
// or 1 after printing the error as one kubectl-style line on stderr.
func Run(ctx context.Context, streams cli.Streams, args []string) int {
	cmd := NewCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	var exit *cli.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(streams.ErrOut, cli.FormatError(err))
	}
	return cli.ExitCode(err)
}
