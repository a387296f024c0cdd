package completion

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// NewCommand returns the completion command; root is the command tree to
// complete.
func NewCommand(streams cli.Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion SHELL",
		Short: "Output shell completion code for the specified shell (bash, zsh, fish, or powershell)",
		Long: `Output shell completion code for the specified shell (bash, zsh, fish, or powershell).
The shell code must be evaluated to provide interactive completion of
kubectl-lite commands.`,
		Example: `  source <(kubectl-lite completion bash)
  kubectl-lite completion zsh > "${fpath[1]}/_kubectl-lite"`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
			return fmt.Errorf("Unsupported shell type %q.", args[0])
		},
	}
}
