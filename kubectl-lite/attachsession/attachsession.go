package attachsession

import (
	"context"
	"fmt"
	"io"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
)

// Options of one attach session.
type Options struct {
	Streams   cli.Streams
	Config    *client.Config
	Client    *client.Client
	Pod       *api.Pod
	Container string
	// Stdin, TTY and Quiet are -i, -t and -q.
	Stdin, TTY, Quiet bool
	// CommandName is how to attach again ("kubectl-lite attach").
	CommandName string
}

// Run attaches to the container as kubectl does: the terminal setting
// follows the container's (-t to a container without one is refused with
// kubectl's words; a container with one gets a terminal regardless), and
// kubectl's prompt hint comes first.
func Run(ctx context.Context, o Options) error {
	errOut := o.Streams.ErrOut
	name := o.Container
	if name == "" {
		w := errOut
		if o.Quiet {
			w = io.Discard
		}
		name = podselect.DefaultContainer(cli.Streams{ErrOut: w}, o.Pod)
	}
	spec := podselect.Container(o.Pod, name)
	if spec == nil {
		return fmt.Errorf("cannot attach to the container: container %s not found in pod %s", name, o.Pod.Name)
	}
	tty := o.TTY
	switch {
	case tty && !spec.TTY:
		tty = false
		if !o.Quiet {
			fmt.Fprintf(errOut, "error: Unable to use a TTY - container %s did not allocate one\n", name)
		}
	case !tty && spec.TTY:
		// The process runs in a terminal: its output is a terminal's.
		tty = true
	}
	opts, q, restore, err := remotecommand.Setup(remotecommand.LocalStreams{In: o.Streams.In, Out: o.Streams.Out,
		ErrOut: errOut, Stdin: o.Stdin, TTY: tty, Quiet: o.Quiet})
	if err != nil {
		return err
	}
	defer restore()
	q.Set("container", name)
	if !o.Quiet {
		fmt.Fprintln(errOut, "All commands and output from this session will be recorded in container logs, including credentials and sensitive information passed through the command prompt.")
		fmt.Fprintln(errOut, "If you don't see a command prompt, try pressing enter.")
	}
	path := client.ResourcePath(client.Resource[api.Pod](o.Client).Info(), o.Pod.Namespace, o.Pod.Name, "attach")
	if err := remotecommand.Exec(ctx, o.Config, path, q, opts); err != nil {
		return err
	}
	restore()
	if !o.Quiet && o.Stdin && opts.TTY {
		fmt.Fprintln(o.Streams.Out, reattachMessage(o.Pod, name, o.CommandName))
	}
	return nil
}

// reattachMessage is kubectl's word after a terminal session.
func reattachMessage(pod *api.Pod, container, command string) string {
	for _, ec := range pod.Spec.EphemeralContainers {
		if ec.Name == container {
			return fmt.Sprintf("Session ended, the ephemeral container will not be restarted but may be reattached using '%s %s -c %s -n %s -i -t' if it is still running",
				command, pod.Name, container, pod.Namespace)
		}
	}
	return fmt.Sprintf("Session ended, resume using '%s %s -c %s -n %s -i -t' command", command, pod.Name, container, pod.Namespace)
}
