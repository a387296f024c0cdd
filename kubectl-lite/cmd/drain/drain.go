package drain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// nodes resolves "NODE..." or -l into node names.
func nodes(ctx context.Context, c *client.Client, args []string, selector string) ([]string, error) {
	if len(args) == 0 && selector == "" {
		return nil, errors.New("USAGE: NODE [flags]\nerror: at least one node name or a selector is required")
	}
	var out []string
	for _, a := range args {
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(a, "node/"), "nodes/"))
	}
	if selector != "" {
		l, err := client.Resource[api.Node](c).List(ctx, client.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, err
		}
		for _, n := range l.Items {
			out = append(out, n.Name)
		}
	}
	return out, nil
}

// setUnschedulable cordons or uncordons a node and says what it did; a
// client dry run sends nothing, a server one sends the patch with
// dryRun=All.
func setUnschedulable(ctx context.Context, c *client.Client, name string, unschedulable bool, dryRun cli.DryRun) (string, error) {
	nc := client.Resource[api.Node](c)
	n, err := nc.Get(ctx, name)
	if err != nil {
		return "", err
	}
	verb := "cordoned"
	if !unschedulable {
		verb = "uncordoned"
	}
	if n.Spec.Unschedulable == unschedulable {
		return "already " + verb, nil
	}
	p := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, unschedulable)
	switch dryRun {
	case cli.DryRunClient:
	case cli.DryRunServer:
		if _, err := c.Do(ctx, client.Request{Method: http.MethodPatch, Path: client.ResourcePath(nc.Info(), "", name),
			Query: dryRun.Query(), Body: p, ContentType: string(client.StrategicMergePatchType)}); err != nil {
			return "", err
		}
	default:
		if _, err := nc.Patch(ctx, name, client.StrategicMergePatchType, p); err != nil {
			return "", err
		}
	}
	return verb + dryRun.Suffix(), nil
}

func cordonCommand(streams cli.Streams, g *cli.Globals, cordon bool) *cobra.Command {
	var (
		selector string
		dryRun   cli.DryRun
	)
	use, short := "uncordon NODE", "Mark node as schedulable"
	if cordon {
		use, short = "cordon NODE", "Mark node as unschedulable"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  kubectl-lite " + strings.Fields(use)[0] + " node-1",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dryRun.Validate(); err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			names, err := nodes(cmd.Context(), c, args, selector)
			if err != nil {
				return err
			}
			for _, n := range names {
				msg, err := setUnschedulable(cmd.Context(), c, n, cordon, dryRun)
				if err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "node/%s %s\n", n, msg)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on")
	dryRun.Bind(cmd)
	return cmd
}

// NewCordonCommand returns the cordon command.
func NewCordonCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return cordonCommand(streams, g, true)
}

// NewUncordonCommand returns the uncordon command.
func NewUncordonCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return cordonCommand(streams, g, false)
}

// Options are drain's flags.
type Options struct {
	Force              bool
	IgnoreDaemonSets   bool
	DeleteEmptyDirData bool
	GracePeriod        int64
	Timeout            time.Duration
	Selector           string
	PodSelector        string
	DisableEviction    bool
	// DryRun is "none", "client" (say what would be evicted) or "server"
	// (send the cordon and the evictions with dryRun=All).
	DryRun cli.DryRun
}

// NewDrainCommand returns the drain command.
func NewDrainCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "drain NODE",
		Short: "Drain node in preparation for maintenance",
		Long: `Drain node in preparation for maintenance.

The node is cordoned, then its pods are evicted (or deleted, when the
server has no eviction API) and drain waits until they are gone. Mirror
pods are skipped. DaemonSet pods need --ignore-daemonsets, pods without a
controller need --force and pods with emptyDir volumes need
--delete-emptydir-data, or drain refuses to touch the node's pods.`,
		Example: `  kubectl-lite drain node-1 --ignore-daemonsets
  kubectl-lite drain node-1 --force --grace-period=0 --timeout=60s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.DryRun.Validate(); err != nil {
				return err
			}
			c, err := noRetryClient(g)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			names, err := nodes(ctx, c, args, o.Selector)
			if err != nil {
				return err
			}
			var failed []string
			var errs []error
			for _, n := range names {
				msg, err := setUnschedulable(ctx, c, n, true, o.DryRun)
				if err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "node/%s %s\n", n, msg)
				if err := Drain(ctx, streams, c, n, o); err != nil {
					fmt.Fprintf(streams.ErrOut, "error: unable to drain node %q due to error: %v, continuing command...\n", n, err)
					failed = append(failed, n)
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(streams.Out, "node/%s drained%s\n", n, o.DryRun.Suffix())
			}
			if len(failed) > 0 {
				fmt.Fprintf(streams.ErrOut, "There are pending nodes to be drained:\n")
				for _, n := range failed {
					fmt.Fprintf(streams.ErrOut, " %s\n", n)
				}
				// kubectl prints each node's error bare (no "error: ").
				return cli.Aggregate(errs)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Force, "force", false, "Continue even if there are pods that do not declare a controller.")
	f.BoolVar(&o.IgnoreDaemonSets, "ignore-daemonsets", false, "Ignore DaemonSet-managed pods.")
	f.BoolVar(&o.DeleteEmptyDirData, "delete-emptydir-data", false, "Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
	f.Int64Var(&o.GracePeriod, "grace-period", -1, "Period of time in seconds given to each pod to terminate gracefully. If negative, the default value specified in the pod will be used.")
	f.DurationVar(&o.Timeout, "timeout", 0, "The length of time to wait before giving up, zero means infinite")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on")
	f.StringVar(&o.PodSelector, "pod-selector", "", "Label selector to filter pods on the node")
	f.BoolVar(&o.DisableEviction, "disable-eviction", false, "Force drain to use delete, even if eviction is supported.")
	o.DryRun.Bind(cmd)
	return cmd
}

// verdict is the outcome of kubectl's drain filters for one pod: skipped,
// refused with a reason, or to be deleted with any warnings.
type verdict struct {
	skip     bool
	fail     string
	warnings []string
}

// check runs kubectl's pod filters in their order (DaemonSet, mirror,
// local storage, unreplicated); the first refusal or skip ends it.
func check(p *api.Pod, o Options) verdict {
	var v verdict
	if p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil {
		// Already terminating: wait for it, do not evict again.
		return v
	}
	terminal := p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
	ctrl := api.GetControllerOf(&p.ObjectMeta)
	if ctrl != nil && ctrl.Kind == "DaemonSet" {
		if !o.IgnoreDaemonSets {
			return verdict{fail: "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"}
		}
		return verdict{skip: true, warnings: []string{"ignoring DaemonSet-managed Pods"}}
	}
	if _, ok := p.Annotations[api.MirrorPodAnnotationKey]; ok {
		return verdict{skip: true}
	}
	if !terminal {
		for _, vol := range p.Spec.Volumes {
			if vol.EmptyDir == nil {
				continue
			}
			if !o.DeleteEmptyDirData {
				return verdict{fail: "cannot delete Pods with local storage (use --delete-emptydir-data to override)"}
			}
			v.warnings = append(v.warnings, "deleting Pods with local storage")
			break
		}
	}
	if ctrl == nil && !terminal {
		if !o.Force {
			return verdict{fail: "cannot delete Pods that declare no controller (use --force to override)"}
		}
		v.warnings = append(v.warnings, "deleting Pods that declare no controller")
	}
	return v
}

// Drain evicts or deletes the pods of node name that the filters allow and
// waits until they are gone. When that fails it names the pods still to
// go, as kubectl does.
func Drain(ctx context.Context, streams cli.Streams, c *client.Client, name string, o Options) error {
	victims, err := podsForDeletion(ctx, streams, c, name, o, true)
	if err != nil {
		return err
	}
	if len(victims) == 0 {
		return nil
	}
	if o.DryRun == cli.DryRunClient {
		for _, p := range victims {
			fmt.Fprintf(streams.Out, "evicting pod %s/%s (dry run)\n", p.Namespace, p.Name)
		}
		return nil
	}
	evict := false
	if !o.DisableEviction {
		if evict, err = evictionSupported(ctx, c); err != nil {
			return err
		}
	}
	var opts *api.DeleteOptions
	if o.GracePeriod >= 0 {
		gp := o.GracePeriod
		opts = &api.DeleteOptions{GracePeriodSeconds: &gp}
	}
	if o.DryRun == cli.DryRunServer {
		if opts == nil {
			opts = &api.DeleteOptions{}
		}
		opts.DryRun = []string{"All"}
	}
	if evict {
		err = evictPods(ctx, streams, c, victims, opts, o)
	} else {
		err = deletePods(ctx, streams, c, victims, opts, o)
	}
	if err != nil {
		if pending, lerr := podsForDeletion(ctx, streams, c, name, o, false); lerr == nil && len(pending) > 0 {
			fmt.Fprintf(streams.ErrOut, "There are pending pods in node %q when an error occurred: %v\n", name, err)
			for _, p := range pending {
				fmt.Fprintf(streams.ErrOut, "pod/%s\n", p.Name)
			}
		}
		return err
	}
	return nil
}

// podsForDeletion lists the pods of node name and runs kubectl's filters
// over them: the pods to evict or delete, or the filters' refusals, one
// error per reason, as an aggregate. warn prints the filters' warnings.
func podsForDeletion(ctx context.Context, streams cli.Streams, c *client.Client, name string, o Options, warn bool) ([]api.Pod, error) {
	pc := client.Resource[api.Pod](c).Namespace("")
	l, err := pc.List(ctx, client.ListOptions{FieldSelector: "spec.nodeName=" + name, LabelSelector: o.PodSelector})
	if err != nil {
		return nil, err
	}
	var (
		victims  []api.Pod
		failures = map[string][]string{}
		warnings = map[string][]string{}
		order    []string
	)
	for _, p := range l.Items {
		v := check(&p, o)
		key := p.Namespace + "/" + p.Name
		if v.fail != "" {
			if len(failures[v.fail]) == 0 {
				order = append(order, v.fail)
			}
			failures[v.fail] = append(failures[v.fail], key)
			continue
		}
		for _, w := range v.warnings {
			if len(warnings[w]) == 0 {
				order = append(order, w)
			}
			warnings[w] = append(warnings[w], key)
		}
		if !v.skip {
			victims = append(victims, p)
		}
	}
	// Report in kubectl's filter order, not in the order pods were listed.
	sort.SliceStable(order, func(i, j int) bool { return rank(order[i]) < rank(order[j]) })
	if len(failures) > 0 {
		var errs cli.Aggregate
		for _, r := range order {
			if pods, ok := failures[r]; ok {
				errs = append(errs, fmt.Errorf("%s: %s", r, strings.Join(pods, ", ")))
			}
		}
		return nil, errs
	}
	if warn {
		for _, r := range order {
			if pods, ok := warnings[r]; ok {
				fmt.Fprintf(streams.ErrOut, "Warning: %s: %s\n", r, strings.Join(pods, ", "))
			}
		}
	}
	return victims, nil
}

// deletePods deletes the pods (the server has no eviction API, or
// --disable-eviction) and waits until they are gone.
func deletePods(ctx context.Context, streams cli.Streams, c *client.Client, victims []api.Pod, opts *api.DeleteOptions, o Options) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	for _, p := range victims {
		if err := client.Resource[api.Pod](c).Namespace(p.Namespace).Delete(ctx, p.Name, opts); err != nil && !apierrors.IsNotFound(err) {
			return timeoutError(ctx, o, err)
		}
	}
	if o.DryRun == cli.DryRunServer {
		// Nothing goes away in a dry run: there is nothing to wait for.
		for _, p := range victims {
			fmt.Fprintf(streams.Out, "pod/%s deleted (server dry run)\n", p.Name)
		}
		return nil
	}
	for _, p := range victims {
		d := c.Dynamic(client.Resource[api.Pod](c).Info()).Namespace(p.Namespace)
		if err := resource.WaitGone(ctx, d, p.Name, string(p.UID)); err != nil {
			return timeoutError(ctx, o, err)
		}
		fmt.Fprintf(streams.Out, "pod/%s deleted\n", p.Name)
	}
	return nil
}

// evictPods evicts the pods all at once, each retrying while a disruption
// budget refuses it, and waits until they are gone, as kubectl does: a
// --timeout that runs out ends every pod's attempts with kubectl's "global
// timeout reached" error. The errors come back as one aggregate.
func evictPods(ctx context.Context, streams cli.Streams, c *client.Client, victims []api.Pod, opts *api.DeleteOptions, o Options) error {
	deadline := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		deadline, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	out, errOut := &syncWriter{w: streams.Out}, &syncWriter{w: streams.ErrOut}
	errs := make([]error, len(victims))
	var wg sync.WaitGroup
	for i, p := range victims {
		wg.Go(func() { errs[i] = evictAndWait(ctx, deadline, out, errOut, c, p, opts, o) })
	}
	wg.Wait()
	var failed cli.Aggregate
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		return failed
	}
	return nil
}

// evictAndWait evicts p, again every five seconds while a budget refuses
// it (429), until deadline ends, then waits until p is gone. Requests run
// under ctx: the deadline is checked between attempts, as kubectl does.
func evictAndWait(ctx, deadline context.Context, out, errOut io.Writer, c *client.Client, p api.Pod, opts *api.DeleteOptions, o Options) error {
	ev := map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace},
	}
	if opts != nil {
		ev["deleteOptions"] = opts
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode eviction: %w", err)
	}
	info := client.Resource[api.Pod](c).Info()
	for evicted := false; !evicted; {
		fmt.Fprintf(out, "evicting pod %s/%s%s\n", p.Namespace, p.Name, o.DryRun.Suffix())
		if deadline.Err() != nil {
			return fmt.Errorf("error when evicting pods/%q -n %q: global timeout reached: %v", p.Name, p.Namespace, o.Timeout)
		}
		_, err := c.Do(ctx, client.Request{Method: http.MethodPost, Path: client.ResourcePath(info, p.Namespace, p.Name, "eviction"), Body: body})
		switch {
		case err == nil:
			evicted = true
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsTooManyRequests(err):
			fmt.Fprintf(errOut, "error when evicting pods/%q -n %q (will retry after 5s): %v\n", p.Name, p.Namespace, err)
			select {
			case <-deadline.Done():
			case <-time.After(5 * time.Second):
			}
		default:
			return fmt.Errorf("error when evicting pods/%q -n %q: %w", p.Name, p.Namespace, err)
		}
	}
	if o.DryRun == cli.DryRunServer {
		// Nothing goes away in a dry run: there is nothing to wait for.
		fmt.Fprintf(out, "pod/%s evicted (server dry run)\n", p.Name)
		return nil
	}
	d := c.Dynamic(client.Resource[api.Pod](c).Info()).Namespace(p.Namespace)
	if err := resource.WaitGone(deadline, d, p.Name, string(p.UID)); err != nil {
		return fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %w", p.Name, p.Namespace, err)
	}
	fmt.Fprintf(out, "pod/%s evicted\n", p.Name)
	return nil
}

// syncWriter serializes the writes of concurrent evictions.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// rank orders reasons as kubectl's filters run: DaemonSet, local storage,
// unreplicated.
func rank(reason string) int {
	switch {
	case strings.Contains(reason, "DaemonSet"):
		return 0
	case strings.Contains(reason, "local storage"):
		return 1
	}
	return 2
}

func timeoutError(ctx context.Context, o Options, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("drain did not complete within %v", o.Timeout)
	}
	return err
}

// evictionSupported reads discovery for pods/eviction, as kubectl does.
func evictionSupported(ctx context.Context, c *client.Client) (bool, error) {
	b, err := c.Do(ctx, client.Request{Path: "/api/v1"})
	if err != nil {
		return false, err
	}
	var list struct {
		Resources []struct {
			Name string `json:"name"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return false, fmt.Errorf("decode discovery of /api/v1: %w", err)
	}
	for _, r := range list.Resources {
		if r.Name == "pods/eviction" {
			return true, nil
		}
	}
	return false, nil
}

// noRetryClient is the client drain uses: one that hands a 429 back at
// once, as client-go does when the answer has no Retry-After header (an
// eviction refused by a disruption budget has none), so that drain itself
// reports and retries it.
func noRetryClient(g *cli.Globals) (*client.Client, error) {
	cc, err := g.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg := *cc
	cfg.MaxRetries = -1
	return client.New(&cfg)
}
