package label

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// kind says which metadata map a command edits.
type kind struct {
	command, field, verb, noun string // "label", "labels", "labeled", "label"
}

var (
	labels      = kind{"label", "labels", "labeled", "label"}
	annotations = kind{"annotate", "annotations", "annotated", "annotation"}
)

// NewLabelCommand returns the label command.
func NewLabelCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return newCommand(streams, g, labels, `  kubectl-lite label pods foo unhealthy=true
  kubectl-lite label --overwrite pods foo status=unhealthy
  kubectl-lite label pods --all status=unhealthy
  kubectl-lite label pods foo bar-`)
}

// NewAnnotateCommand returns the annotate command.
func NewAnnotateCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return newCommand(streams, g, annotations, `  kubectl-lite annotate pods foo description='my frontend'
  kubectl-lite annotate --overwrite pods foo description='my frontend running nginx'
  kubectl-lite annotate pods foo description-`)
}

func newCommand(streams cli.Streams, g *cli.Globals, k kind, example string) *cobra.Command {
	var (
		overwrite bool
		selector  string
		all       bool
		rv        string
	)
	cmd := &cobra.Command{
		Use:   k.command + " [--overwrite] (TYPE NAME | TYPE/NAME) KEY_1=VAL_1 ... KEY_N=VAL_N",
		Short: "Update the " + k.field + " on a resource",
		Long: "Update the " + k.field + " on a resource.\n\nA KEY=VAL pair adds a " + k.noun + ", KEY- removes it. An existing " + k.noun +
			" is only changed with --overwrite.",
		Example: example,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var resArgs, pairs []string
			for _, a := range args {
				if strings.Contains(a, "=") || (strings.HasSuffix(a, "-") && len(resArgs) > 0) {
					pairs = append(pairs, a)
				} else {
					resArgs = append(resArgs, a)
				}
			}
			if len(pairs) == 0 {
				return fmt.Errorf("at least one %s update is required", k.noun)
			}
			set, remove, err := parsePairs(pairs)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, refs, err := g.Select(ctx, resArgs, selector, all)
			if err != nil {
				return err
			}
			for _, r := range refs {
				d := c.Dynamic(r.Info).Namespace(r.Namespace)
				u, err := d.Get(ctx, r.Name)
				if err != nil {
					return err
				}
				md, _ := u.Object["metadata"].(map[string]any)
				cur, _ := md[k.field].(map[string]any)
				if !overwrite {
					if err := k.noOverwrites(cur, set); err != nil {
						return err
					}
				}
				change := map[string]any{}
				for key, v := range set {
					if cur[key] != v {
						change[key] = v
					}
				}
				for _, key := range remove {
					if _, ok := cur[key]; ok {
						change[key] = nil
					} else {
						fmt.Fprintf(streams.ErrOut, "%s %q not found.\n", k.noun, key)
					}
				}
				if len(change) == 0 {
					fmt.Fprintf(streams.Out, "%s not %s\n", r, k.verb)
					continue
				}
				meta := map[string]any{k.field: change}
				if rv != "" {
					meta["resourceVersion"] = rv
				}
				p, err := json.Marshal(map[string]any{"metadata": meta})
				if err != nil {
					return fmt.Errorf("encode patch: %w", err)
				}
				if _, err := d.Patch(ctx, r.Name, client.MergePatchType, p); err != nil {
					return err
				}
				verb := k.verb
				if k.command == "label" && !overwrite && allNil(change) {
					// kubectl says "unlabeled" when the object only lost labels.
					verb = "unlabeled"
				}
				fmt.Fprintf(streams.Out, "%s %s\n", r, verb)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&overwrite, "overwrite", false, "If true, allow "+k.field+" to be overwritten, otherwise reject "+k.noun+" updates that overwrite existing "+k.field+".")
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&all, "all", false, "Select all resources, in the namespace of the specified resource types")
	f.StringVar(&rv, "resource-version", "", "If non-empty, the "+k.noun+" update will only succeed if this is the current resource-version for the object. Only valid when specifying a single resource.")
	return cmd
}

// noOverwrites is kubectl's refusal to change an existing value without
// --overwrite, worded as kubectl words it for labels and for annotations.
func (k kind) noOverwrites(cur map[string]any, set map[string]string) error {
	var clashes []string
	for _, key := range slices.Sorted(maps.Keys(set)) {
		if v, ok := cur[key]; ok && v != set[key] {
			if k.command == "label" {
				clashes = append(clashes, fmt.Sprintf("'%s' already has a value (%v), and --overwrite is false", key, v))
			} else {
				clashes = append(clashes, fmt.Sprintf("'%s' already has a value (%v)", key, v))
			}
		}
	}
	switch {
	case len(clashes) == 0:
		return nil
	case k.command == "label" && len(clashes) == 1:
		return errors.New(clashes[0])
	case k.command == "label":
		return errors.New("[" + strings.Join(clashes, ", ") + "]")
	}
	return errors.New("--overwrite is false but found the following declared annotation(s): " + strings.Join(clashes, "; "))
}

func allNil(m map[string]any) bool {
	for _, v := range m {
		if v != nil {
			return false
		}
	}
	return true
}

// parsePairs splits "k=v" and "k-" arguments.
func parsePairs(pairs []string) (map[string]string, []string, error) {
	set := map[string]string{}
	var remove []string
	for _, p := range pairs {
		if key, val, ok := strings.Cut(p, "="); ok {
			if key == "" {
				return nil, nil, fmt.Errorf("invalid label spec: %s", p)
			}
			set[key] = val
			continue
		}
		key := strings.TrimSuffix(p, "-")
		if key == "" {
			return nil, nil, fmt.Errorf("invalid label spec: %s", p)
		}
		remove = append(remove, key)
	}
	for _, r := range remove {
		if _, ok := set[r]; ok {
			return nil, nil, errors.New("can not both modify and remove the following label(s) in the same command: " + r)
		}
	}
	return set, remove, nil
}
