package root

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/apiresources"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/apply"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/attach"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/auth"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/autoscale"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/clusterinfo"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/completion"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/config"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/cp"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/create"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/debug"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/delete"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/describe"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/diff"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/drain"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/edit"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/exec"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/expose"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/get"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/label"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/logs"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/patch"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/portforward"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/replace"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/rollout"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/run"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/scale"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/set"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/taint"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/token"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/top"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/version"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/wait"
)

// NewCommand returns the root command with every verb wired to streams.
func NewCommand(streams cli.Streams) *cobra.Command {
	g := &cli.Globals{}
	cmd := &cobra.Command{
		Use:           "kubectl-lite",
		Short:         "kubectl-lite controls a minik8s cluster",
		Long:          "kubectl-lite controls a minik8s cluster, the way kubectl controls Kubernetes: same verbs, flags, output and exit codes.",
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
	pf.StringVarP(&g.Server, "server", "s", "", "The address and port of the Kubernetes API server")
	pf.StringVar(&g.Token, "token", "", "Bearer token for authentication to the API server")
	pf.BoolVar(&g.Insecure, "insecure-skip-tls-verify", false, "If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure")
	pf.StringVar(&g.As, "as", "", "Username to impersonate for the operation. User could be a regular user or a service account in a namespace.")
	pf.StringArrayVar(&g.AsGroups, "as-group", nil, "Group to impersonate for the operation, this flag can be repeated to specify multiple groups.")
	pf.StringVar(&g.AsUID, "as-uid", "", "UID to impersonate for the operation.")
	pf.StringVar(&g.RequestTimeout, "request-timeout", "0", "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.")
	cmd.AddCommand(
		version.NewCommand(streams, g),
		clusterinfo.NewCommand(streams, g),
		config.NewCommand(streams, g),
		apiresources.NewCommand(streams, g),
		token.NewCommand(streams, g),
		get.NewCommand(streams, g),
		get.NewEventsCommand(streams, g),
		apply.NewCommand(streams, g),
		create.NewCommand(streams, g),
		replace.NewCommand(streams, g),
		run.NewCommand(streams, g),
		diff.NewCommand(streams, g),
		expose.NewCommand(streams, g),
		delete.NewCommand(streams, g),
		describe.NewCommand(streams, g),
		edit.NewCommand(streams, g),
		scale.NewCommand(streams, g),
		autoscale.NewCommand(streams, g),
		top.NewCommand(streams, g),
		set.NewCommand(streams, g),
		patch.NewCommand(streams, g),
		label.NewLabelCommand(streams, g),
		label.NewAnnotateCommand(streams, g),
		rollout.NewCommand(streams, g),
		drain.NewCordonCommand(streams, g),
		drain.NewUncordonCommand(streams, g),
		drain.NewDrainCommand(streams, g),
		taint.NewCommand(streams, g),
		logs.NewCommand(streams, g),
		exec.NewCommand(streams, g),
		attach.NewCommand(streams, g),
		portforward.NewCommand(streams, g),
		debug.NewCommand(streams, g),
		cp.NewCommand(streams, g),
		wait.NewCommand(streams, g),
		auth.NewCommand(streams, g),
		completion.NewCommand(streams),
	)
	groupCommands(cmd)
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

// groups are kubectl's headings of "kubectl --help", with the verbs
// kubectl-lite has under each.
var groups = []struct {
	id, title string
	verbs     []string
}{
	{"basic", "Basic Commands (Beginner):", []string{"create", "expose", "run", "set"}},
	{"intermediate", "Basic Commands (Intermediate):", []string{"get", "edit", "delete"}},
	{"deploy", "Deploy Commands:", []string{"rollout", "scale", "autoscale"}},
	{"cluster", "Cluster Management Commands:", []string{"cluster-info", "top", "cordon", "uncordon", "drain", "taint", "token"}},
	{"debug", "Troubleshooting and Debugging Commands:", []string{"describe", "logs", "attach", "exec", "port-forward", "cp", "auth", "debug", "events"}},
	{"advanced", "Advanced Commands:", []string{"apply", "diff", "patch", "replace", "wait"}},
	{"settings", "Settings Commands:", []string{"label", "annotate", "completion"}},
}

// groupCommands files every verb under its heading; the rest (config,
// version, api-resources, help) are listed as "Other Commands".
func groupCommands(root *cobra.Command) {
	byName := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		byName[c.Name()] = c
	}
	for _, gr := range groups {
		root.AddGroup(&cobra.Group{ID: gr.id, Title: gr.title})
		for _, v := range gr.verbs {
			if c, ok := byName[v]; ok {
				c.GroupID = gr.id
			}
		}
	}
	root.SetHelpCommandGroupID("")
	root.SetCompletionCommandGroupID("settings")
}
