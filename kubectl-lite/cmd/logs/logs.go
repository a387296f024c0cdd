package logs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// DefaultContainerAnnotation names the container logs and exec use when
// none is given.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// NewCommand returns the logs command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		container  string
		follow     bool
		tail       int64
		previous   bool
		timestamps bool
		since      string
		limitBytes int64
	)
	cmd := &cobra.Command{
		Use:   "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]",
		Short: "Print the logs for a container in a pod",
		Long: `Print the logs for a container in a pod or specified resource.

If the pod has only one container, the container name is optional. For a
deployment or replica set, one of its pods is chosen.`,
		Example: `  kubectl-lite logs web-1
  kubectl-lite logs -f web-1 -c app
  kubectl-lite logs --tail=20 deployment/web
  kubectl-lite logs -p web-1`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			if len(args) == 2 {
				if container != "" {
					return fmt.Errorf("only one of -c or an inline [CONTAINER] arg is allowed")
				}
				container = args[1]
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, err := Pod(ctx, streams, c, ns, args[0])
			if err != nil {
				return err
			}
			if container == "" {
				container = DefaultContainer(streams, pod)
			}
			req := client.Resource[api.Pod](c).Namespace(ns).Subresource(pod.Name, "log")
			if container != "" {
				req = req.Param("container", container)
			}
			if follow {
				req = req.Param("follow", "true")
			}
			if tail >= 0 {
				req = req.Param("tailLines", strconv.FormatInt(tail, 10))
			}
			if previous {
				req = req.Param("previous", "true")
			}
			if timestamps {
				req = req.Param("timestamps", "true")
			}
			if limitBytes > 0 {
				req = req.Param("limitBytes", strconv.FormatInt(limitBytes, 10))
			}
			if since != "" {
				d, err := parseSince(since)
				if err != nil {
					return err
				}
				req = req.Param("sinceSeconds", strconv.FormatInt(d, 10))
			}
			body, err := req.Stream(ctx)
			if err != nil {
				return err
			}
			defer body.Close()
			if _, err := io.Copy(streams.Out, body); err != nil && ctx.Err() == nil {
				return fmt.Errorf("read log stream: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&container, "container", "c", "", "Print the logs of this container")
	f.BoolVarP(&follow, "follow", "f", false, "Specify if the logs should be streamed.")
	f.Int64Var(&tail, "tail", -1, "Lines of recent log file to display. Defaults to -1, showing all log lines.")
	f.BoolVarP(&previous, "previous", "p", false, "If true, print the logs for the previous instance of the container in a pod if it exists.")
	f.BoolVar(&timestamps, "timestamps", false, "Include timestamps on each line in the log output")
	f.StringVar(&since, "since", "", "Only return logs newer than a relative duration like 5s, 2m, or 3h.")
	f.Int64Var(&limitBytes, "limit-bytes", 0, "Maximum bytes of logs to return. Defaults to no limit.")
	return cmd
}

func parseSince(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid argument %q for \"--since\" flag: %w", s, err)
	}
	secs := int64(d.Seconds())
	if secs < 1 {
		secs = 1
	}
	return secs, nil
}

// Pod resolves "NAME", "pod/NAME" or a workload "TYPE/NAME" to a pod.
func Pod(ctx context.Context, streams cli.Streams, c *client.Client, ns, arg string) (*api.Pod, error) {
	pods := client.Resource[api.Pod](c).Namespace(ns)
	if !strings.Contains(arg, "/") {
		return pods.Get(ctx, arg)
	}
	sel, err := resource.Parse([]string{arg}, ns, false)
	if err != nil {
		return nil, err
	}
	r := sel.Refs[0]
	if r.Info.Kind == "Pod" {
		return pods.Get(ctx, r.Name)
	}
	u, err := c.Dynamic(r.Info).Namespace(ns).Get(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	spec, _ := u.Object["spec"].(map[string]any)
	selMap, _ := spec["selector"].(map[string]any)
	ml, _ := selMap["matchLabels"].(map[string]any)
	if len(ml) == 0 {
		return nil, fmt.Errorf("cannot attach to %s: selector for %s not implemented", r.Info.Kind, r)
	}
	set := labels.Set{}
	for k, v := range ml {
		set[k] = fmt.Sprint(v)
	}
	l, err := pods.List(ctx, client.ListOptions{LabelSelector: labels.SelectorFromSet(set).String()})
	if err != nil {
		return nil, err
	}
	if len(l.Items) == 0 {
		return nil, fmt.Errorf("timed out waiting for the condition")
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	if len(l.Items) > 1 {
		fmt.Fprintf(streams.ErrOut, "Found %d pods, using pod/%s\n", len(l.Items), l.Items[0].Name)
	}
	return &l.Items[0], nil
}

// DefaultContainer picks the annotated default container or the first,
// saying so on stderr when the pod has several, as kubectl does.
func DefaultContainer(streams cli.Streams, p *api.Pod) string {
	if name := p.Annotations[DefaultContainerAnnotation]; name != "" {
		for _, ctr := range p.Spec.Containers {
			if ctr.Name == name {
				return name
			}
		}
		fmt.Fprintf(streams.ErrOut, "Default container name %q not found in pod %s\n", name, p.Name)
	}
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	if len(p.Spec.Containers) > 1 {
		names := make([]string, len(p.Spec.Containers))
		for i, ctr := range p.Spec.Containers {
			names[i] = ctr.Name
		}
		fmt.Fprintf(streams.ErrOut, "Defaulted container %q out of: %s\n", names[0], strings.Join(names, ", "))
	}
	return p.Spec.Containers[0].Name
}
