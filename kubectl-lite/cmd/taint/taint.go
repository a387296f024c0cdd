package taint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// Options are taint's flags.
type Options struct {
	Overwrite bool
	All       bool
	Selector  string
	DryRun    cli.DryRun
}

// NewCommand returns the taint command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:                   "taint NODE NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		DisableFlagsInUseLine: true,
		Short:                 "Update the taints on one or more nodes",
		Long: `Update the taints on one or more nodes.

 * A taint consists of a key, value, and effect. As an argument here, it is expressed as key=value:effect.
 * The key must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to 253 characters.
 * Optionally, the key can begin with a DNS subdomain prefix and a single '/', like example.com/my-app.
 * The value is optional. If given, it must begin with a letter or number, and may contain letters, numbers, hyphens, dots, and underscores, up to 63 characters.
 * The effect must be NoSchedule, PreferNoSchedule or NoExecute.
 * Currently taint can only apply to node.`,
		Example: `  # Update node 'foo' with a taint with key 'dedicated' and value 'special-user' and effect 'NoSchedule'
  # If a taint with that key and effect already exists, its value is replaced as specified
  kubectl-lite taint nodes foo dedicated=special-user:NoSchedule

  # Remove from node 'foo' the taint with key 'dedicated' and effect 'NoSchedule' if one exists
  kubectl-lite taint nodes foo dedicated:NoSchedule-

  # Remove from node 'foo' all the taints with key 'dedicated'
  kubectl-lite taint nodes foo dedicated-

  # Add a taint with key 'dedicated' on nodes having label myLabel=X
  kubectl-lite taint node -l myLabel=X  dedicated=foo:PreferNoSchedule

  # Add to node 'foo' a taint with key 'bar' and no value
  kubectl-lite taint nodes foo bar:NoSchedule`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.DryRun.Validate(); err != nil {
				return err
			}
			resources, add, remove, err := parseArgs(args)
			if err != nil {
				var usage usageError
				if errors.As(err, &usage) {
					return cli.UsageError(cmd, err.Error())
				}
				return err
			}
			if err := validate(resources, add, remove, o); err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			return run(cmd.Context(), streams, c, resources[1:], add, remove, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Overwrite, "overwrite", false, "If true, allow taints to be overwritten, otherwise reject taint updates that overwrite existing taints.")
	f.BoolVar(&o.All, "all", false, "Select all nodes in the cluster")
	f.StringVarP(&o.Selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	o.DryRun.Bind(cmd)
	return cmd
}

// usageError is an argument error kubectl follows with its "See ... -h"
// line.
type usageError struct{ error }

// parseArgs splits the arguments into resources (a type, then names) and
// taint changes, as kubectl: a change has "=", ":" or a trailing "-", and
// every resource comes before the first change.
func parseArgs(args []string) (resources []string, add, remove []api.Taint, err error) {
	var changes []string
	for _, a := range args {
		change := strings.Contains(a, "=") || strings.Contains(a, ":") || strings.HasSuffix(a, "-")
		switch {
		case change:
			changes = append(changes, a)
		case len(changes) > 0:
			return nil, nil, nil, fmt.Errorf("all resources must be specified before taint changes: %s", a)
		default:
			resources = append(resources, a)
		}
	}
	if len(resources) < 1 {
		return nil, nil, nil, errors.New("one or more resources must be specified as <resource> <name>")
	}
	if len(changes) < 1 {
		return nil, nil, nil, errors.New("at least one taint update is required")
	}
	add, remove, err = parseTaints(changes)
	if err != nil {
		return nil, nil, nil, usageError{err}
	}
	return resources, add, remove, nil
}

// parseTaints reads KEY[=VALUE]:EFFECT to add and KEY[:EFFECT]- to remove.
func parseTaints(specs []string) (add, remove []api.Taint, err error) {
	seen := map[api.TaintEffect]map[string]bool{}
	for _, spec := range specs {
		if s, ok := strings.CutSuffix(spec, "-"); ok {
			t, err := parseTaint(s)
			if err != nil {
				return nil, nil, err
			}
			remove = append(remove, api.Taint{Key: t.Key, Effect: t.Effect})
			continue
		}
		t, err := parseTaint(spec)
		if err != nil {
			return nil, nil, err
		}
		if t.Effect == "" {
			return nil, nil, fmt.Errorf("invalid taint spec: %v", spec)
		}
		if seen[t.Effect][t.Key] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: %v", goString(t))
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = map[string]bool{}
		}
		seen[t.Effect][t.Key] = true
		add = append(add, t)
	}
	return add, remove, nil
}

// goString is how kubectl's %v prints a core/v1 Taint.
func goString(t api.Taint) string {
	return fmt.Sprintf("{%s %s %s <nil>}", t.Key, t.Value, t.Effect)
}

func parseTaint(spec string) (api.Taint, error) {
	var t api.Taint
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 1:
		t.Key = parts[0]
	case 2:
		t.Effect = api.TaintEffect(parts[1])
		switch t.Effect {
		case api.TaintEffectNoSchedule, api.TaintEffectPreferNoSchedule, api.TaintEffectNoExecute:
		default:
			return t, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", t.Effect)
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("invalid taint spec: %v", spec)
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			t.Value = kv[1]
			if errs := naming.IsValidLabelValue(t.Value); len(errs) > 0 {
				return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
			}
		}
	default:
		return t, fmt.Errorf("invalid taint spec: %v", spec)
	}
	if errs := naming.IsQualifiedName(t.Key); len(errs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	return t, nil
}

// validate makes kubectl's checks: node is the only type, no taint both
// changed and removed, names or -l or --all.
func validate(resources []string, add, remove []api.Taint, o Options) error {
	switch typ := strings.ToLower(resources[0]); typ {
	case "node", "nodes", "no":
	default:
		return fmt.Errorf("invalid resource type %s, only node types are supported", typ)
	}
	var conflicts []string
	for _, a := range add {
		for _, r := range remove {
			if a.Key == r.Key && (r.Effect == "" || a.Effect == r.Effect) {
				conflicts = append(conflicts, fmt.Sprintf("%s=%s", r.Key, r.Effect))
			}
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("can not both modify and remove the following taint(s) in the same command: %s", strings.Join(conflicts, ", "))
	}
	if o.All && o.Selector != "" {
		return errors.New("setting 'all' parameter with a non empty selector is prohibited")
	}
	if !o.All && o.Selector == "" && len(resources) < 2 {
		return errors.New("at least one resource name must be specified since 'all' parameter is not set")
	}
	return nil
}

// run updates each node: the named ones, or those -l or --all select.
func run(ctx context.Context, streams cli.Streams, c *client.Client, names []string, add, remove []api.Taint, o Options) error {
	nc := client.Resource[api.Node](c)
	var nodes []*api.Node
	if o.All || o.Selector != "" {
		l, err := nc.List(ctx, client.ListOptions{LabelSelector: o.Selector})
		if err != nil {
			return err
		}
		for i := range l.Items {
			nodes = append(nodes, &l.Items[i])
		}
	} else {
		for _, name := range names {
			n, err := nc.Get(ctx, name)
			if err != nil {
				return err
			}
			nodes = append(nodes, n)
		}
	}
	for _, n := range nodes {
		op, taints, err := update(n, add, remove, o.Overwrite)
		if err != nil {
			return err
		}
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"taints": taints}})
		if err != nil {
			return err
		}
		switch o.DryRun {
		case cli.DryRunClient:
		case cli.DryRunServer:
			if _, err := c.Do(ctx, client.Request{Method: http.MethodPatch, Path: client.ResourcePath(nc.Info(), "", n.Name),
				Query: o.DryRun.Query(), Body: patch, ContentType: string(client.StrategicMergePatchType)}); err != nil {
				return err
			}
		default:
			if _, err := nc.Patch(ctx, n.Name, client.StrategicMergePatchType, patch); err != nil {
				return err
			}
		}
		// No "(dry run)" suffix: kubectl's taint sets its printer's
		// operation after the dry-run strategy, which drops it.
		fmt.Fprintf(streams.Out, "node/%s %s\n", n.Name, op)
	}
	return nil
}

// update is kubectl's: without --overwrite a taint to add must not exist
// with its key and effect; the new taints are the added ones, then the
// node's others, less the removed ones (each of which must exist). It
// says "tainted", "untainted" or "modified" (both, or --overwrite). An
// empty result is nil, which the patch sends as null (no taints).
func update(n *api.Node, add, remove []api.Taint, overwrite bool) (string, []api.Taint, error) {
	if !overwrite {
		var exist []string
		for _, a := range add {
			for _, old := range n.Spec.Taints {
				if a.Key == old.Key && a.Effect == old.Effect {
					exist = append(exist, a.Key)
				}
			}
		}
		if len(exist) > 0 {
			return "", nil, fmt.Errorf("node %s already has %v taint(s) with same effect(s) and --overwrite is false", n.Name, strings.Join(exist, ","))
		}
	}
	taints := append([]api.Taint(nil), add...)
	for _, old := range n.Spec.Taints {
		replaced := false
		for _, t := range taints {
			if t.Key == old.Key && t.Effect == old.Effect {
				replaced = true
				break
			}
		}
		if !replaced {
			taints = append(taints, old)
		}
	}
	added := len(taints) != len(n.Spec.Taints)
	var errs cli.Aggregate
	removed := false
	for _, r := range remove {
		var kept []api.Taint
		for _, t := range taints {
			if t.Key == r.Key && (r.Effect == "" || t.Effect == r.Effect) {
				continue
			}
			kept = append(kept, t)
		}
		removed = len(kept) != len(taints)
		if !removed {
			s := r.Key
			if r.Effect != "" {
				s += ":" + string(r.Effect)
			}
			errs = append(errs, fmt.Errorf("taint %q not found", s))
		}
		taints = kept
	}
	op := "untainted"
	switch {
	case (added && removed) || overwrite:
		op = "modified"
	case added:
		op = "tainted"
	}
	if len(errs) > 0 {
		return "", nil, errs
	}
	return op, taints, nil
}
