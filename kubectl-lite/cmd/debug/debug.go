package debug

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/attachsession"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
)

type options struct {
	image, container, target, pullPolicy string
	stdin, tty, quiet, attach            bool
}

// NewCommand returns the debug command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "debug (POD | TYPE/NAME) [ -- COMMAND [args...] ]",
		Short: "Create debugging sessions for troubleshooting workloads",
		Long: `Debug cluster resources using interactive debugging containers.

An ephemeral container is added to the running pod; with -i the command
attaches to it. --target shares the process namespace of one of the pod's
containers, so its processes can be seen and traced.`,
		Example: `  kubectl-lite debug -it mypod --image=busybox
  kubectl-lite debug -it mypod --image=busybox --target=app
  kubectl-lite debug mypod -it --image=busybox --container=debug -- sh`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var command []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				command = args[dash:]
				args = args[:dash]
			}
			if len(args) == 0 {
				return errors.New("NAME or filename is required for debug")
			}
			if len(args) > 1 {
				return errors.New("you must specify an existing container or a new image when specifying args.")
			}
			if o.image == "" {
				return errors.New("you must specify --image when not using --copy-to.")
			}
			switch api.PullPolicy(o.pullPolicy) {
			case "", api.PullAlways, api.PullIfNotPresent, api.PullNever:
			default:
				return fmt.Errorf("invalid image pull policy: %s", o.pullPolicy)
			}
			if o.target != "" && !o.quiet {
				fmt.Fprintf(streams.Out, "Targeting container %q. If you don't see processes from this container it may be because the container runtime doesn't support this feature.\n", o.target)
			}
			if o.tty && !o.stdin {
				return errors.New("-i/--stdin is required for containers with -t/--tty=true")
			}
			if !cmd.Flags().Changed("attach") {
				o.attach = o.stdin
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
			return o.run(cmd.Context(), streams, cc, c, ns, args[0], command, cmd.Root().Name())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.image, "image", "", "Container image to use for debug container.")
	f.StringVarP(&o.container, "container", "c", "", "Container name to use for debug container.")
	f.StringVar(&o.target, "target", "", "When using an ephemeral container, target processes in this container name.")
	f.StringVar(&o.pullPolicy, "image-pull-policy", "", "The image pull policy for the container. If left empty, this value will not be specified by the client and defaulted by the server.")
	f.BoolVarP(&o.stdin, "stdin", "i", false, "Keep stdin open on the container(s) in the pod, even if nothing is attached.")
	f.BoolVarP(&o.tty, "tty", "t", false, "Allocate a TTY for the debugging container.")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "If true, suppress informational messages.")
	f.BoolVar(&o.attach, "attach", false, "If true, wait for the container to start running, and then attach as if 'kubectl attach ...' were called.  Default false, unless '-i/--stdin' is set, in which case the default is true.")
	return cmd
}

// run adds the ephemeral container and attaches to it.
func (o options) run(ctx context.Context, streams cli.Streams, cc *client.Config, c *client.Client, ns, arg string, command []string, root string) error {
	pod, err := podselect.Pod(ctx, streams, c, ns, arg)
	if err != nil {
		return err
	}
	name := o.container
	if name == "" {
		for name == "" || podselect.Container(pod, name) != nil {
			name = "debugger-" + suffix(5)
		}
		if !o.quiet {
			fmt.Fprintf(streams.Out, "Defaulting debug container name to %s.\n", name)
		}
	}
	ec := api.EphemeralContainer{Container: api.Container{Name: name, Image: o.image, ImagePullPolicy: api.PullPolicy(o.pullPolicy),
		Command: command, Stdin: o.stdin, TTY: o.tty, TerminationMessagePolicy: api.TerminationMessageReadFile}, TargetContainerName: o.target}
	// As kubectl's two-way merge patch: the new container, and the order
	// of the list with it last.
	order := []map[string]string{}
	for _, c := range pod.Spec.EphemeralContainers {
		order = append(order, map[string]string{"name": c.Name})
	}
	order = append(order, map[string]string{"name": name})
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{
		"$setElementOrder/ephemeralContainers": order, "ephemeralContainers": []api.EphemeralContainer{ec}}})
	if err != nil {
		return fmt.Errorf("error creating patch to add debug container: %v", err)
	}
	pods := client.Resource[api.Pod](c)
	_, err = c.Do(ctx, client.Request{Method: http.MethodPatch, Path: client.ResourcePath(pods.Info(), ns, pod.Name, "ephemeralcontainers"),
		Body: patch, ContentType: "application/strategic-merge-patch+json"})
	var se *apierrors.StatusError
	if errors.As(err, &se) && se.Status().Reason == api.StatusReasonNotFound && (se.Status().Details == nil || se.Status().Details.Name == "") {
		return fmt.Errorf("ephemeral containers are disabled for this cluster (error from server: %q)", err)
	}
	if err != nil {
		return err
	}
	if !o.attach {
		return nil
	}
	pod, st, err := waitForContainer(ctx, streams, pods.Namespace(ns), pod.Name, name)
	if err != nil {
		return err
	}
	if st.State.Terminated != nil {
		return containerLogs(ctx, streams.Out, c, pods.Info(), pod, name)
	}
	err = attachsession.Run(ctx, attachsession.Options{Streams: streams, Config: cc, Client: c, Pod: pod, Container: name,
		Stdin: o.stdin, TTY: o.tty, Quiet: o.quiet, CommandName: root + " attach"})
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "warning: couldn't attach to pod/%s, falling back to streaming logs: %v\n", pod.Name, err)
		return containerLogs(ctx, streams.Out, c, pods.Info(), pod, name)
	}
	return nil
}

// waitForContainer waits until the ephemeral container runs or has ended,
// passing on why it waits, as kubectl's warnings.
func waitForContainer(ctx context.Context, streams cli.Streams, pods *client.ResourceClient[api.Pod, *api.Pod], podName, name string) (*api.Pod, *api.ContainerStatus, error) {
	said := ""
	for {
		pod, err := pods.Get(ctx, podName)
		if err != nil {
			return nil, nil, err
		}
		for i := range pod.Status.EphemeralContainerStatuses {
			s := &pod.Status.EphemeralContainerStatuses[i]
			if s.Name != name {
				continue
			}
			if s.State.Running != nil || s.State.Terminated != nil {
				return pod, s, nil
			}
			if w := s.State.Waiting; w != nil && w.Message != "" && w.Message != said {
				said = w.Message
				fmt.Fprintf(streams.ErrOut, "Warning: container %s: %s\n", name, w.Message)
			}
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func containerLogs(ctx context.Context, out io.Writer, c *client.Client, info api.ResourceInfo, pod *api.Pod, name string) error {
	body, err := c.Stream(ctx, client.Request{Path: client.ResourcePath(info, pod.Namespace, pod.Name, "log"), Query: url.Values{"container": {name}}})
	if err != nil {
		return err
	}
	defer body.Close()
	_, err = io.Copy(out, body)
	return err
}

// suffix is apimachinery's rand.String alphabet (no vowels, no
// look-alikes).
func suffix(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
