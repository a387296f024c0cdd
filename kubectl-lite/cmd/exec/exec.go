package exec

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
)

// NewCommand returns the exec command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		container string
		stdin     bool
		tty       bool
		quiet     bool
	)
	cmd := &cobra.Command{
		Use:   "exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]",
		Short: "Execute a command in a container",
		Long: `Execute a command in a container.

The command's output is streamed back; with -i stdin is passed to it and
with -t it runs in a terminal (the local terminal is put in raw mode).
kubectl-lite exits with the command's exit code.`,
		Example: `  kubectl-lite exec web-1 -- date
  kubectl-lite exec web-1 -c app -- ls /
  kubectl-lite exec -it web-1 -- sh
  echo hi | kubectl-lite exec -i deployment/web -- cat`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 && len(args) < 2 {
				return errors.New("you must specify at least one command for the container")
			}
			if dash != 1 {
				return errors.New("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
			}
			command := args[1:]
			if len(command) == 0 {
				return errors.New("you must specify at least one command for the container")
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			cc, err := g.ClientConfig()
			if err != nil {
				return err
			}
			c, err := client.New(cc)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, err := podselect.Pod(ctx, streams, c, ns, args[0])
			if err != nil {
				return err
			}
			if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
				return fmt.Errorf("cannot exec into a container in a completed pod; current phase is %s", pod.Status.Phase)
			}
			if container == "" {
				errOut := streams.ErrOut
				if quiet {
					errOut = io.Discard
				}
				container = podselect.DefaultContainer(cli.Streams{ErrOut: errOut}, pod)
			}
			opts, q, restore, err := remotecommand.Setup(remotecommand.LocalStreams{In: streams.In, Out: streams.Out,
				ErrOut: streams.ErrOut, Stdin: stdin, TTY: tty, Quiet: quiet})
			if err != nil {
				return err
			}
			defer restore()
			for _, a := range command {
				q.Add("command", a)
			}
			q.Set("container", container)
			path := client.ResourcePath(client.Resource[api.Pod](c).Info(), ns, pod.Name, "exec")
			err = remotecommand.Exec(ctx, cc, path, q, opts)
			var ee *remotecommand.ExitError
			if errors.As(err, &ee) {
				restore()
				fmt.Fprintln(streams.ErrOut, ee.Error())
				return &cli.ExitError{Code: ee.Code}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	f.BoolVarP(&stdin, "stdin", "i", false, "Pass stdin to the container")
	f.BoolVarP(&tty, "tty", "t", false, "Stdin is a TTY")
	f.BoolVarP(&quiet, "quiet", "q", false, "Only print output from the remote session")
	return cmd
}
