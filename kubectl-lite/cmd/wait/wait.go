package wait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// pollInterval is how often an object is read again.
const pollInterval = 500 * time.Millisecond

// condition is a parsed --for.
type condition struct {
	deleted bool
	// condType/condStatus: --for=condition=Ready[=True]
	condType, condStatus string
	// path/value: --for=jsonpath='{.status.phase}'=Running
	path, value string
}

func parseFor(s string) (condition, error) {
	switch {
	case strings.ToLower(s) == "delete":
		return condition{deleted: true}, nil
	case strings.HasPrefix(s, "condition="):
		rest := strings.TrimPrefix(s, "condition=")
		typ, status, ok := strings.Cut(rest, "=")
		if !ok {
			status = "True"
		}
		if typ == "" {
			return condition{}, fmt.Errorf("condition name is required in --for=%s", s)
		}
		return condition{condType: typ, condStatus: status}, nil
	case strings.HasPrefix(s, "jsonpath="):
		rest := strings.TrimPrefix(s, "jsonpath=")
		// The expression ends at the "=" after its closing brace.
		i := strings.LastIndex(rest, "}")
		if !strings.HasPrefix(rest, "{") || i < 0 || i+1 >= len(rest) || rest[i+1] != '=' {
			return condition{}, fmt.Errorf("jsonpath wait format must be --for=jsonpath='{.status.readyReplicas}'=3")
		}
		path, value := rest[:i+1], rest[i+2:]
		if _, err := printers.JSONPath(path); err != nil {
			return condition{}, err
		}
		return condition{path: path, value: value}, nil
	}
	return condition{}, fmt.Errorf("unrecognized condition: %q", s)
}

// met says whether obj satisfies c (c.deleted is handled by the caller).
func (c condition) met(obj map[string]any) (bool, error) {
	if c.path != "" {
		j, err := printers.JSONPath(c.path)
		if err != nil {
			return false, err
		}
		var b strings.Builder
		if err := printers.PrintJSONPath(&b, j, obj); err != nil {
			// A field not there yet is "not yet", not an error.
			return false, nil
		}
		return b.String() == c.value, nil
	}
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, x := range conds {
		m, _ := x.(map[string]any)
		if t, _ := m["type"].(string); strings.EqualFold(t, c.condType) {
			s, _ := m["status"].(string)
			return strings.EqualFold(s, c.condStatus), nil
		}
	}
	return false, nil
}

// NewCommand returns the wait command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		forArg   string
		timeout  time.Duration
		selector string
		all      bool
		allNS    bool
		files    manifest.Files
	)
	cmd := &cobra.Command{
		Use:   "wait ([-f FILENAME] | resource.group/resource.name | resource.group [(-l label | --all)]) [--for=delete|--for condition=available|--for=jsonpath='{}'=value]",
		Short: "Experimental: Wait for a specific condition on one or many resources",
		Long: `Wait for a specific condition on one or many resources.

--for=condition=NAME[=STATUS] waits for status.conditions (STATUS defaults
to True), --for=jsonpath='{EXPR}'=VALUE for a field to print VALUE, and
--for=delete for the objects to be gone. Each object is printed with
"condition met" when it is; the exit code is 1 when --timeout passes first.`,
		Example: `  kubectl-lite wait --for=condition=Available deployment/web --timeout=60s
  kubectl-lite wait --for=condition=Ready pod -l app=web
  kubectl-lite wait --for=jsonpath='{.status.phase}'=Running pod/busybox1
  kubectl-lite wait --for=delete pod/busybox1 --timeout=60s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if forArg == "" {
				return errors.New("--for must be specified")
			}
			cond, err := parseFor(forArg)
			if err != nil {
				return err
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			if allNS {
				ns = ""
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var refs []resource.Ref
			if len(files.Filenames) > 0 {
				var err error
				if refs, err = files.Refs(cmd.Context(), streams, g); err != nil {
					return err
				}
			} else {
				sel, err := g.Parse(cmd.Context(), args, ns, selector != "" || all)
				if err != nil {
					return err
				}
				if refs, err = sel.Expand(ctx, c, ns, client.ListOptions{LabelSelector: selector}); err != nil {
					return err
				}
			}
			if len(refs) == 0 {
				return errors.New("no matching resources found")
			}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			for _, r := range refs {
				if err := waitOne(ctx, c, r, cond); err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						return fmt.Errorf("timed out waiting for the condition on %s/%s", r.Info.Resource, r.Name)
					}
					return err
				}
				fmt.Fprintf(streams.Out, "%s condition met\n", r)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&forArg, "for", "", "The condition to wait on: [delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=JSONPath value]. The default condition-value is true.")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "The length of time to wait before giving up.  Zero means check once and don't wait, negative means wait for a week.")
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', and '!='.")
	f.BoolVar(&all, "all", false, "Select all resources in the namespace of the specified resource types")
	f.BoolVarP(&allNS, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	files.Bind(cmd, "identifying the resource.")
	return cmd
}

// waitOne reads r until cond holds or ctx ends.
func waitOne(ctx context.Context, c *client.Client, r resource.Ref, cond condition) error {
	d := c.Dynamic(r.Info).Namespace(r.Namespace)
	for {
		u, err := d.Get(ctx, r.Name)
		switch {
		case cond.deleted && apierrors.IsNotFound(err):
			return nil
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case !cond.deleted:
			ok, err := cond.met(u.Object)
			if err != nil {
				return err
			}
			if ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}
