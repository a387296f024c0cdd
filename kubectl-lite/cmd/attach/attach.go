package attach

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/attachsession"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
)

// NewCommand returns the attach command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		container         string
		stdin, tty, quiet bool
	)
	cmd := &cobra.Command{
		Use:   "attach (POD | TYPE/NAME) -c CONTAINER",
		Short: "Attach to a running container",
		Long:  "Attach to a process that is already running inside an existing container.",
		Example: `  kubectl-lite attach mypod
  kubectl-lite attach mypod -c ruby-container
  kubectl-lite attach mypod -c ruby-container -i -t
  kubectl-lite attach deployment/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return fmt.Errorf("at least 1 argument is required for attach")
			case len(args) > 2:
				return fmt.Errorf("expected POD, TYPE/NAME, or TYPE NAME, (at most 2 arguments) saw %d: %v", len(args), args)
			}
			arg := args[0]
			if len(args) == 2 {
				arg = args[0] + "/" + args[1]
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
			pod, err := podselect.Pod(ctx, streams, c, ns, arg)
			if err != nil {
				return err
			}
			if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
				return fmt.Errorf("cannot attach a container in a completed pod; current phase is %s", pod.Status.Phase)
			}
			return attachsession.Run(ctx, attachsession.Options{Streams: streams, Config: cc, Client: c, Pod: pod, Container: container,
				Stdin: stdin, TTY: tty, Quiet: quiet, CommandName: cmd.Root().Name() + " attach"})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	f.BoolVarP(&stdin, "stdin", "i", false, "Pass stdin to the container")
	f.BoolVarP(&tty, "tty", "t", false, "Stdin is a TTY")
	f.BoolVarP(&quiet, "quiet", "q", false, "Only print output from the remote session")
	return cmd
}
