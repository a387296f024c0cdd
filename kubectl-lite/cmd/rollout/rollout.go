package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/deployment"
	"github.com/minik8s/minik8s/kubectl-lite/describers"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// RestartedAtAnnotation is what "rollout restart" sets on the pod
// template, so the template changes and a new ReplicaSet rolls out. (The
// deployment controller's annotations and reasons are api's.)
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// NewCommand returns the rollout command and its subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the rollout of a resource",
		Long:  "Manage the rollout of one or many resources. Valid resource types: deployments, statefulsets, daemonsets (pause and resume: deployments).",
		Example: `  kubectl-lite rollout status deployment/web
  kubectl-lite rollout history deployment/web
  kubectl-lite rollout undo deployment/web --to-revision=2
  kubectl-lite rollout restart deployment/web`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStatus(streams, g), newHistory(streams, g), newUndo(streams, g), newRestart(streams, g),
		newPause(streams, g, true), newPause(streams, g, false))
	return cmd
}

// target resolves the "deployment/web" or "deployment web" arguments of
// the kinds given (Deployment when none).
func target(g *cli.Globals, args []string, kinds ...string) ([]resource.Ref, *client.Client, error) {
	if len(kinds) == 0 {
		kinds = []string{"Deployment"}
	}
	ns, err := g.DefaultNamespace()
	if err != nil {
		return nil, nil, err
	}
	sel, err := resource.Parse(args, ns, false)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range sel.Refs {
		if !slices.Contains(kinds, r.Info.Kind) {
			if len(kinds) == 1 {
				return nil, nil, fmt.Errorf("no rollout support for %s: only deployments are supported", resource.KindName(r.Info))
			}
			return nil, nil, fmt.Errorf("no rollout support for %s: only deployments, statefulsets and daemonsets are supported", resource.KindName(r.Info))
		}
	}
	c, err := g.Client()
	if err != nil {
		return nil, nil, err
	}
	return sel.Refs, c, nil
}

func deployments(c *client.Client, ns string) *client.ResourceClient[api.Deployment, *api.Deployment] {
	return client.Resource[api.Deployment](c).Namespace(ns)
}

// Status is kubectl's DeploymentStatusViewer: the message to print, whether
// the rollout is complete, and an error once its deadline passed.
func Status(d *api.Deployment) (string, bool, error) {
	if d.Generation <= d.Status.ObservedGeneration {
		for _, c := range d.Status.Conditions {
			if c.Type == api.DeploymentProgressing && c.Reason == api.TimedOutReason {
				return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
			}
		}
		if d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n",
				d.Name, d.Status.UpdatedReplicas, *d.Spec.Replicas), false, nil
		}
		if d.Status.Replicas > d.Status.UpdatedReplicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n",
				d.Name, d.Status.Replicas-d.Status.UpdatedReplicas), false, nil
		}
		if d.Status.AvailableReplicas < d.Status.UpdatedReplicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n",
				d.Name, d.Status.AvailableReplicas, d.Status.UpdatedReplicas), false, nil
		}
		return fmt.Sprintf("deployment %q successfully rolled out\n", d.Name), true, nil
	}
	return "Waiting for deployment spec update to be observed...\n", false, nil
}

func newStatus(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		watch    bool
		revision int64
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status (TYPE NAME | TYPE/NAME)",
		Short: "Show the status of the rollout",
		Long: `Show the status of the rollout.

By default it watches the Deployment until the rollout is complete, printing
a line at every change, and exits 1 when the Deployment exceeds its progress
deadline or --timeout passes.`,
		Example: "  kubectl-lite rollout status deployment/web --timeout=2m",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, c, err := target(g, args, workloadKinds...)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			for _, r := range refs {
				var err error
				switch r.Info.Kind {
				case "StatefulSet":
					err = watchStatus(ctx, streams, client.Resource[api.StatefulSet](c).Namespace(r.Namespace), r.Name, watch, StatefulSetStatus)
				case "DaemonSet":
					err = watchStatus(ctx, streams, client.Resource[api.DaemonSet](c).Namespace(r.Namespace), r.Name, watch, DaemonSetStatus)
				default:
					err = status(ctx, streams, deployments(c, r.Namespace), r.Name, watch, revision)
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&watch, "watch", "w", true, "Watch the status of the rollout until it's done.")
	f.Int64Var(&revision, "revision", 0, "Pin to a specific revision for showing its status. Defaults to 0 (last revision).")
	f.DurationVar(&timeout, "timeout", 0, "The length of time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	return cmd
}

func status(ctx context.Context, streams cli.Streams, dc *client.ResourceClient[api.Deployment, *api.Deployment], name string, watch bool, revision int64) error {
	return watchStatus(ctx, streams, dc, name, watch, func(d *api.Deployment) (string, bool, error) {
		if revision > 0 {
			cur, err := strconv.ParseInt(d.Annotations[api.RevisionAnnotation], 10, 64)
			if err != nil {
				return "", false, fmt.Errorf("cannot get the revision of deployment %q: %w", d.Name, err)
			}
			if cur != revision {
				return "", false, fmt.Errorf("desired revision (%d) is different from the running revision (%d)", revision, cur)
			}
		}
		return Status(d)
	})
}

// watchStatus prints viewer's message for the object, and with watch at
// each change until the rollout is done.
func watchStatus[T any, PT interface {
	*T
	api.Object
}](ctx context.Context, streams cli.Streams, rc *client.ResourceClient[T, PT], name string, watch bool, viewer func(*T) (string, bool, error)) error {
	check := func(obj *T) (bool, error) {
		msg, done, err := viewer(obj)
		if err != nil {
			return false, err
		}
		fmt.Fprint(streams.Out, msg)
		return done, nil
	}
	for {
		obj, err := rc.Get(ctx, name)
		if err != nil {
			return timedOut(ctx, err)
		}
		done, err := check(obj)
		if done || err != nil || !watch {
			return err
		}
		w, err := rc.Watch(ctx, client.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: PT(obj).GetObjectMeta().ResourceVersion})
		if err != nil {
			return timedOut(ctx, err)
		}
		done, err = follow(ctx, w, check)
		w.Stop()
		if done || err != nil {
			return timedOut(ctx, err)
		}
		// The server ended the watch: read again and go on.
	}
}

// follow applies check to each change until it says done, fails, or the
// watch ends (false, nil).
func follow[T any](ctx context.Context, w client.Watcher[T], check func(*T) (bool, error)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case api.Deleted:
				return false, fmt.Errorf("object has been deleted")
			case api.Error, api.Bookmark:
				continue
			}
			if done, err := check(ev.Object); done || err != nil {
				return done, err
			}
		}
	}
}

func timedOut(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errors.New("timed out waiting for the condition")
	}
	return err
}

// revisionHistory returns the revisions of a Deployment (its
// ReplicaSets) or of a StatefulSet or DaemonSet (its ControllerRevisions).
func revisionHistory(ctx context.Context, c *client.Client, r resource.Ref) (map[int64]entry, error) {
	if r.Info.Kind != "Deployment" {
		uid, _, err := ownerOf(ctx, c, r)
		if err != nil {
			return nil, err
		}
		return controllerHistory(ctx, c, r, uid)
	}
	d, err := deployments(c, r.Namespace).Get(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	rss, err := deployment.ReplicaSets(ctx, c, d)
	if err != nil {
		return nil, err
	}
	out := map[int64]entry{}
	for v, rs := range history(rss) {
		out[v] = entry{template: rs.Spec.Template, cause: rs.Annotations[api.ChangeCauseAnnotation]}
	}
	return out, nil
}

// history maps revisions to the ReplicaSet of each.
func history(rss []api.ReplicaSet) map[int64]*api.ReplicaSet {
	out := map[int64]*api.ReplicaSet{}
	for i := range rss {
		v, err := strconv.ParseInt(rss[i].Annotations[api.RevisionAnnotation], 10, 64)
		if err != nil {
			continue
		}
		out[v] = &rss[i]
	}
	return out
}

func newHistory(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var revision int64
	cmd := &cobra.Command{
		Use:     "history (TYPE NAME | TYPE/NAME)",
		Short:   "View rollout history",
		Long:    "View previous rollout revisions and configurations, from the revision annotations of the Deployment's ReplicaSets.",
		Example: "  kubectl-lite rollout history deployment/web\n  kubectl-lite rollout history deployment/web --revision=3",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, c, err := target(g, args, workloadKinds...)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, r := range refs {
				h, err := revisionHistory(ctx, c, r)
				if err != nil {
					return err
				}
				if revision > 0 {
					e, ok := h[revision]
					if !ok {
						return errors.New("unable to find the specified revision")
					}
					fmt.Fprintf(streams.Out, "%s with revision #%d\n", r, revision)
					tmpl := e.template
					if e.cause != "" {
						tmpl.Annotations = copyMap(tmpl.Annotations)
						tmpl.Annotations[api.ChangeCauseAnnotation] = e.cause
					}
					describers.PodTemplate(streams.Out, &tmpl)
					fmt.Fprintln(streams.Out)
					continue
				}
				fmt.Fprintf(streams.Out, "%s\n", r)
				if len(h) == 0 {
					fmt.Fprintln(streams.Out, "No rollout history found.")
					continue
				}
				revs := make([]int64, 0, len(h))
				for v := range h {
					revs = append(revs, v)
				}
				sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
				w := tabwriter.NewWriter(streams.Out, 0, 8, 2, ' ', 0)
				fmt.Fprintf(w, "REVISION\tCHANGE-CAUSE\n")
				for _, v := range revs {
					cause := h[v].cause
					if cause == "" {
						cause = "<none>"
					}
					fmt.Fprintf(w, "%d\t%s\n", v, cause)
				}
				w.Flush()
				fmt.Fprintln(streams.Out)
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&revision, "revision", 0, "See the details, including podTemplate of the revision specified")
	return cmd
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func newUndo(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var toRevision int64
	cmd := &cobra.Command{
		Use:   "undo (TYPE NAME | TYPE/NAME) [flags]",
		Short: "Undo a previous rollout",
		Long: `Roll back to a previous rollout.

The pod template of the ReplicaSet of the chosen revision (the previous one
by default) is copied into the Deployment, as kubectl does on the client.`,
		Example: "  kubectl-lite rollout undo deployment/web\n  kubectl-lite rollout undo deployment/web --to-revision=3",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, c, err := target(g, args, workloadKinds...)
			if err != nil {
				return err
			}
			for _, r := range refs {
				undo := undo
				if r.Info.Kind != "Deployment" {
					undo = undoControllerHistory
				}
				msg, err := undo(cmd.Context(), c, r, toRevision)
				if err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "%s %s\n", r, msg)
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to rollback to. Default to 0 (last revision).")
	return cmd
}

func undo(ctx context.Context, c *client.Client, r resource.Ref, toRevision int64) (string, error) {
	dc := deployments(c, r.Namespace)
	d, err := dc.Get(ctx, r.Name)
	if err != nil {
		return "", err
	}
	if d.Spec.Paused {
		return "", fmt.Errorf("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/%s' and try again", d.Name)
	}
	rss, err := deployment.ReplicaSets(ctx, c, d)
	if err != nil {
		return "", err
	}
	h := history(rss)
	var rs *api.ReplicaSet
	if toRevision > 0 {
		rs = h[toRevision]
		if rs == nil {
			return "", fmt.Errorf("unable to find specified revision %d in history", toRevision)
		}
	} else {
		previous, latest := int64(-1), int64(-1)
		for v := range h {
			switch {
			case v > latest:
				previous, latest = latest, v
			case v > previous:
				previous = v
			}
		}
		if previous < 0 {
			return "", fmt.Errorf("no rollout history found for deployment %q", d.Name)
		}
		rs, toRevision = h[previous], previous
	}
	tmpl := *api.DeepCopy(&rs.Spec.Template)
	if tmpl.Labels != nil {
		delete(tmpl.Labels, api.DefaultDeploymentUniqueLabelKey)
	}
	if api.EqualIgnoreHash(&tmpl, &d.Spec.Template) {
		return fmt.Sprintf("skipped rollback (current template already matches revision %d)", toRevision), nil
	}
	// The Deployment keeps its own annotations (kubectl's list) and takes
	// the others from the ReplicaSet.
	ann := map[string]string{}
	for k, v := range d.Annotations {
		if api.SkipCopyAnnotation(k) {
			ann[k] = v
		}
	}
	for k, v := range rs.Annotations {
		if !api.SkipCopyAnnotation(k) {
			ann[k] = v
		}
	}
	p, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/spec/template", "value": tmpl},
		{"op": "add", "path": "/metadata/annotations", "value": ann},
	})
	if err != nil {
		return "", fmt.Errorf("encode rollback patch: %w", err)
	}
	if _, err := dc.Patch(ctx, d.Name, client.JSONPatchType, p); err != nil {
		return "", fmt.Errorf("failed restoring revision %d: %w", toRevision, err)
	}
	return "rolled back", nil
}

func newRestart(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "restart (TYPE NAME | TYPE/NAME)",
		Short:   "Restart a resource",
		Long:    "Restart a resource: its pods are replaced by a rolling update, triggered by the kubectl.kubernetes.io/restartedAt annotation of the pod template.",
		Example: "  kubectl-lite rollout restart deployment/web",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, c, err := target(g, args, workloadKinds...)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			for _, r := range refs {
				if r.Info.Kind == "Deployment" {
					d, err := deployments(c, r.Namespace).Get(ctx, r.Name)
					if err != nil {
						return err
					}
					if d.Spec.Paused {
						return fmt.Errorf("can't restart paused deployment (run rollout resume first)")
					}
				}
				p, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
					"annotations": map[string]string{RestartedAtAnnotation: time.Now().Format(time.RFC3339)}}}}})
				if _, err := c.Dynamic(r.Info).Namespace(r.Namespace).Patch(ctx, r.Name, client.StrategicMergePatchType, p); err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "%s restarted\n", r)
			}
			return nil
		},
	}
}

func newPause(streams cli.Streams, g *cli.Globals, pause bool) *cobra.Command {
	verb, done := "resume", "resumed"
	short := "Resume a paused resource"
	if pause {
		verb, done = "pause", "paused"
		short = "Mark the provided resource as paused"
	}
	return &cobra.Command{
		Use:     verb + " (TYPE NAME | TYPE/NAME)",
		Short:   short,
		Example: "  kubectl-lite rollout " + verb + " deployment/web",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return patchEach(cmd, streams, g, args, done, func(d *api.Deployment) ([]byte, error) {
				if d.Spec.Paused == pause {
					if pause {
						return nil, fmt.Errorf("deployments.apps %q is already paused", d.Name)
					}
					return nil, fmt.Errorf("deployments.apps %q is not paused", d.Name)
				}
				return fmt.Appendf(nil, `{"spec":{"paused":%t}}`, pause), nil
			})
		},
	}
}

// patchEach sends each Deployment the arguments name the strategic merge
// patch change makes of it, or stops at change's refusal, and says
// "deployment.apps/NAME done" for each.
func patchEach(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string, done string, change func(*api.Deployment) ([]byte, error)) error {
	refs, c, err := target(g, args)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	for _, r := range refs {
		dc := deployments(c, r.Namespace)
		d, err := dc.Get(ctx, r.Name)
		if err != nil {
			return err
		}
		p, err := change(d)
		if err != nil {
			return err
		}
		if _, err := dc.Patch(ctx, r.Name, client.StrategicMergePatchType, p); err != nil {
			return err
		}
		fmt.Fprintf(streams.Out, "%s %s\n", r, done)
	}
	return nil
}
