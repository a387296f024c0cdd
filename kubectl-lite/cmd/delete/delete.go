package delete

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

type options struct {
	files       manifest.Files
	selector    string
	all         bool
	gracePeriod int64
	force       bool
	now         bool
	wait        bool
	timeout     time.Duration
	ignoreNF    bool
	cascade     string
	dryRun      cli.DryRun
	allNS       bool
	fieldSel    string
}

// NewCommand returns the delete command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "delete ([-f FILENAME] | TYPE [(NAME | -l label | --all)])",
		Short: "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		Long: `Delete resources by file names, stdin, resources and names, or by resources and label selector.

By default the command waits until the objects are gone (their finalizers
ran and, for pods, their kubelet stopped them); --wait=false returns at once.
--force with --grace-period=0 removes pods from the API immediately.`,
		Example: `  kubectl-lite delete -f ./pod.yaml
  kubectl-lite delete pod,service baz foo
  kubectl-lite delete pods -l app=web
  kubectl-lite delete pod foo --now
  kubectl-lite delete pod foo --grace-period=0 --force
  kubectl-lite delete pods --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, streams, g, args)
		},
	}
	f := cmd.Flags()
	o.files.Bind(cmd, "containing the resource to delete.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&o.all, "all", false, "Delete all resources, in the namespace of the specified resource types.")
	f.Int64Var(&o.gracePeriod, "grace-period", -1, "Period of time in seconds given to the resource to terminate gracefully. Ignored if negative. Set to 1 for immediate shutdown. Can only be set to 0 when --force is true (force deletion).")
	f.BoolVar(&o.force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion. Note that immediate deletion of some resources may result in inconsistency or data loss and requires confirmation.")
	f.BoolVar(&o.now, "now", false, "If true, resources are signaled for immediate shutdown (same as --grace-period=1).")
	f.BoolVar(&o.wait, "wait", true, "If true, wait for resources to be gone before returning. This waits for finalizers.")
	f.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before giving up on a delete, zero means determine a timeout from the size of the object")
	f.BoolVar(&o.ignoreNF, "ignore-not-found", false, "Treat \"resource not found\" as a successful delete.")
	o.dryRun.Bind(cmd)
	f.BoolVarP(&o.allNS, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	f.StringVar(&o.fieldSel, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	f.StringVar(&o.cascade, "cascade", "background", `Must be "background", "orphan", or "foreground". Selects the deletion cascading strategy for the dependents (e.g. Pods created by a ReplicationController).`)
	return cmd
}

func (o *options) deleteOptions(streams cli.Streams) (*api.DeleteOptions, error) {
	grace := o.gracePeriod
	if o.now {
		if grace >= 0 {
			return nil, errors.New("--now and --grace-period cannot be specified together")
		}
		grace = 1
	}
	if o.force && grace < 0 {
		grace = 0
	}
	if grace == 0 && !o.force {
		// kubectl turns a zero grace period without --force into the
		// minimum graceful one.
		grace = 1
	}
	if o.force && o.dryRun == cli.DryRunNone {
		fmt.Fprintln(streams.ErrOut, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	}
	opts := &api.DeleteOptions{}
	if grace >= 0 {
		opts.GracePeriodSeconds = &grace
	}
	var policy api.DeletionPropagation
	switch o.cascade {
	case "background", "true":
		policy = api.DeletePropagationBackground
	case "orphan", "false":
		policy = api.DeletePropagationOrphan
	case "foreground":
		policy = api.DeletePropagationForeground
	default:
		return nil, fmt.Errorf(`invalid cascade value (%v). Must be "background", "foreground", or "orphan"`, o.cascade)
	}
	opts.PropagationPolicy = &policy
	if err := o.dryRun.Validate(); err != nil {
		return nil, err
	}
	if o.dryRun == cli.DryRunServer {
		opts.DryRun = []string{"All"}
	}
	return opts, nil
}

// target is one object to delete and the file it came from ("" when
// named on the command line).
type target struct {
	resource.Ref
	source string
}

func (o *options) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, args []string) error {
	ctx := cmd.Context()
	opts, err := o.deleteOptions(streams)
	if err != nil {
		return err
	}
	if o.all && o.selector != "" {
		return fmt.Errorf("setting 'all' parameter but found a non empty selector. ")
	}
	var (
		targets  []target
		unmapped []error // -f objects of kinds the server does not serve
	)
	switch {
	case len(o.files.Filenames) > 0:
		if len(args) > 0 {
			return errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
		}
		objs, errs, err := o.files.Mapped(ctx, streams, g)
		if err != nil {
			return err
		}
		unmapped = errs
		for _, ob := range objs {
			if ob.Name() == "" {
				return fmt.Errorf("error when deleting %q: resource name may not be empty", ob.Source)
			}
			targets = append(targets, target{ob.Ref(), ob.Source})
		}
	case len(args) == 0:
		return errors.New("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
	default:
		ns, err := g.DefaultNamespace()
		if err != nil {
			return err
		}
		if o.allNS {
			ns = ""
		}
		listing := o.selector != "" || o.fieldSel != "" || o.all
		sel, err := g.Parse(ctx, args, ns, listing)
		if err != nil {
			return err
		}
		if len(sel.Refs) > 0 && listing {
			return errors.New("name cannot be provided when a selector is specified")
		}
		if len(sel.Refs) > 0 && o.allNS {
			return errors.New("a resource cannot be retrieved by name across all namespaces")
		}
		c, err := g.Client()
		if err != nil {
			return err
		}
		refs, err := sel.Expand(ctx, c, ns, client.ListOptions{LabelSelector: o.selector, FieldSelector: o.fieldSel})
		if err != nil {
			return err
		}
		if len(refs) == 0 {
			// kubectl says this on stdout for delete (stderr for get).
			fmt.Fprintln(streams.Out, "No resources found")
			return nil
		}
		for _, r := range refs {
			targets = append(targets, target{Ref: r})
		}
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	immediate := o.force && opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds == 0
	verb := "deleted"
	if immediate {
		verb = "force deleted"
	}
	var (
		failures = cli.Failures{Out: streams.ErrOut}
		deleted  []resource.Ref
		uids     []string
	)
	for _, err := range unmapped {
		failures.Add(err)
	}
	for _, t := range targets {
		d := c.Dynamic(t.Info).Namespace(t.Namespace)
		uid := ""
		if o.wait || o.dryRun == cli.DryRunClient {
			u, err := d.Get(ctx, t.Name)
			switch {
			case err == nil:
				uid = resource.UID(u)
			case o.dryRun == cli.DryRunClient && !(o.ignoreNF && apierrors.IsNotFound(err)):
				failures.Add(cli.AddSource("deleting", t.source, err))
				continue
			case o.dryRun == cli.DryRunClient:
				continue
			}
		}
		if o.dryRun != cli.DryRunClient {
			if err := d.Delete(ctx, t.Name, opts); err != nil {
				if o.ignoreNF && apierrors.IsNotFound(err) {
					continue
				}
				failures.Add(cli.AddSource("deleting", t.source, err))
				continue
			}
		}
		deleted = append(deleted, t.Ref)
		uids = append(uids, uid)
		done := verb
		if t.Info.Namespaced {
			// kubectl 1.37 names the namespace of what it deleted.
			done += " from " + t.Namespace + " namespace"
		}
		fmt.Fprintf(streams.Out, "%s %q %s%s\n", resource.KindName(t.Info), t.Name, done, o.dryRun.Suffix())
	}
	if o.wait && !immediate && o.dryRun == cli.DryRunNone {
		wctx := ctx
		if o.timeout > 0 {
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, o.timeout)
			defer cancel()
		}
		for i, t := range deleted {
			if err := resource.WaitGone(wctx, c.Dynamic(t.Info).Namespace(t.Namespace), t.Name, uids[i]); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					err = fmt.Errorf("timed out waiting for the condition on %s/%s", t.Info.Resource, t.Name)
				}
				failures.Add(err)
			}
		}
	}
	return failures.Last()
}
