package logs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
)

// options are the logs flags.
type options struct {
	container      string
	follow         bool
	tail           int64
	previous       bool
	timestamps     bool
	since          string
	sinceTime      string
	limitBytes     int64
	selector       string
	allContainers  bool
	prefix         bool
	maxLogRequests int
}

// target is one container whose log is read.
type target struct {
	pod, container string
}

// NewCommand returns the logs command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]",
		Short: "Print the logs for a container in a pod",
		Long: `Print the logs for a container in a pod or specified resource.

If the pod has only one container, the container name is optional. For a
deployment or replica set, one of its pods is chosen. With -l the logs of
every matching pod are printed (the last 10 lines of each unless --tail
says otherwise).`,
		Example: `  kubectl-lite logs web-1
  kubectl-lite logs -f web-1 -c app
  kubectl-lite logs --tail=20 deployment/web
  kubectl-lite logs -p web-1
  kubectl-lite logs -l app=web --all-containers --prefix`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, g, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.container, "container", "c", "", "Print the logs of this container")
	f.BoolVarP(&o.follow, "follow", "f", false, "Specify if the logs should be streamed.")
	f.Int64Var(&o.tail, "tail", -1, "Lines of recent log file to display. Defaults to -1 with no selector, showing all log lines otherwise 10, if a selector is provided.")
	f.BoolVarP(&o.previous, "previous", "p", false, "If true, print the logs for the previous instance of the container in a pod if it exists.")
	f.BoolVar(&o.timestamps, "timestamps", false, "Include timestamps on each line in the log output")
	f.StringVar(&o.since, "since", "", "Only return logs newer than a relative duration like 5s, 2m, or 3h. Only one of since-time / since may be used.")
	f.StringVar(&o.sinceTime, "since-time", "", "Only return logs after a specific date (RFC3339). Only one of since-time / since may be used.")
	f.Int64Var(&o.limitBytes, "limit-bytes", 0, "Maximum bytes of logs to return. Defaults to no limit.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.BoolVar(&o.allContainers, "all-containers", false, "Get all containers' logs in the pod(s).")
	f.BoolVar(&o.prefix, "prefix", false, "Prefix each log line with the log source (pod name and container name)")
	f.IntVar(&o.maxLogRequests, "max-log-requests", 5, "Specify maximum number of concurrent logs to follow when using by a selector. Defaults to 5.")
	return cmd
}

func (o *options) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	ns, err := g.DefaultNamespace()
	if err != nil {
		return err
	}
	switch {
	case o.selector != "" && len(args) > 0:
		return fmt.Errorf("only a selector (-l) or a POD name is allowed")
	case o.selector == "" && len(args) == 0:
		return fmt.Errorf("expected POD or TYPE/NAME is a required argument for the logs command")
	case len(args) == 2:
		if o.container != "" {
			return fmt.Errorf("only one of -c or an inline [CONTAINER] arg is allowed")
		}
		o.container = args[1]
	}
	if o.allContainers && o.container != "" {
		return fmt.Errorf("--all-containers=true should not be specified with container name %s", o.container)
	}
	if o.since != "" && o.sinceTime != "" {
		return fmt.Errorf("at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var pods []api.Pod
	if o.selector != "" {
		l, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: o.selector})
		if err != nil {
			return err
		}
		sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
		pods = l.Items
		if len(pods) == 0 {
			fmt.Fprintf(streams.ErrOut, "No resources found in %s namespace.\n", ns)
			return nil
		}
		if !cmd.Flags().Changed("tail") {
			o.tail = 10
		}
	} else {
		p, err := podselect.Pod(ctx, streams, c, ns, args[0])
		if err != nil {
			return err
		}
		pods = []api.Pod{*p}
	}
	var targets []target
	for i := range pods {
		p := &pods[i]
		switch {
		case o.allContainers:
			for _, ctr := range p.Spec.InitContainers {
				targets = append(targets, target{p.Name, ctr.Name})
			}
			for _, ctr := range p.Spec.Containers {
				targets = append(targets, target{p.Name, ctr.Name})
			}
		case o.container != "":
			targets = append(targets, target{p.Name, o.container})
		default:
			targets = append(targets, target{p.Name, podselect.DefaultContainer(streams, p)})
		}
	}
	if o.follow && len(targets) > o.maxLogRequests {
		return fmt.Errorf("you are attempting to follow %d log streams, but maximum allowed concurrency is %d, use --max-log-requests to increase the limit", len(targets), o.maxLogRequests)
	}
	out := &lineWriter{w: streams.Out}
	if !o.follow {
		// One after the other, so each container's lines stay together.
		for _, t := range targets {
			if err := o.copy(ctx, c, ns, t, out); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make(chan error, len(targets))
	for _, t := range targets {
		go func() { errs <- o.copy(ctx, c, ns, t, out) }()
	}
	var first error
	for range targets {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// copy streams one container's log to out, line by line with --prefix.
func (o *options) copy(ctx context.Context, c *client.Client, ns string, t target, out *lineWriter) error {
	req := client.Resource[api.Pod](c).Namespace(ns).Subresource(t.pod, "log")
	if t.container != "" {
		req = req.Param("container", t.container)
	}
	if o.follow {
		req = req.Param("follow", "true")
	}
	if o.tail >= 0 {
		req = req.Param("tailLines", strconv.FormatInt(o.tail, 10))
	}
	if o.previous {
		req = req.Param("previous", "true")
	}
	if o.timestamps {
		req = req.Param("timestamps", "true")
	}
	if o.limitBytes > 0 {
		req = req.Param("limitBytes", strconv.FormatInt(o.limitBytes, 10))
	}
	if o.since != "" {
		d, err := parseSince(o.since)
		if err != nil {
			return err
		}
		req = req.Param("sinceSeconds", strconv.FormatInt(d, 10))
	}
	if o.sinceTime != "" {
		ts, err := time.Parse(time.RFC3339, o.sinceTime)
		if err != nil {
			return fmt.Errorf("--since-time: %q is not an RFC3339 time", o.sinceTime)
		}
		req = req.Param("sinceTime", ts.UTC().Format(time.RFC3339))
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	prefix := ""
	if o.prefix {
		prefix = "[pod/" + t.pod + "/" + t.container + "] "
	}
	r := bufio.NewReader(body)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			out.write(prefix + line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read log stream: %w", err)
		}
	}
}

// lineWriter writes whole lines from concurrent streams.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) write(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, s)
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
