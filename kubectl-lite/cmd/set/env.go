package set

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

func newEnv(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		selector, containers string
		all, list            bool
	)
	cmd := &cobra.Command{
		Use:   "env RESOURCE/NAME KEY_1=VAL_1 ... KEY_N=VAL_N",
		Short: "Update environment variables on a pod template",
		Long: `Update environment variables on a pod template.

KEY=VAL sets a variable, KEY- removes it; --list prints the variables of
each container instead.`,
		Example: `  kubectl-lite set env deployment/web STORAGE_DIR=/local
  kubectl-lite set env deployment/web --list
  kubectl-lite set env deployment/web -c app STORAGE_DIR-`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var resArgs []string
			set := map[string]string{}
			var setOrder, remove []string
			for _, a := range args {
				switch {
				case strings.Contains(a, "="):
					k, v, _ := strings.Cut(a, "=")
					if k == "" {
						return fmt.Errorf("invalid env: %s", a)
					}
					if _, dup := set[k]; !dup {
						setOrder = append(setOrder, k)
					}
					set[k] = v
				case strings.HasSuffix(a, "-") && len(resArgs) > 0:
					remove = append(remove, strings.TrimSuffix(a, "-"))
				default:
					resArgs = append(resArgs, a)
				}
			}
			if !list && len(set) == 0 && len(remove) == 0 {
				return fmt.Errorf("at least one environment variable must be provided")
			}
			ctx := cmd.Context()
			c, refs, err := g.Select(ctx, resArgs, selector, all)
			if err != nil {
				return err
			}
			for _, r := range refs {
				changed, err := editPodSpec(ctx, c, r, func(_ *client.Unstructured, spec map[string]any) (bool, error) {
					matched := false
					for _, field := range []string{"initContainers", "containers"} {
						cs, _ := spec[field].([]any)
						for _, ctr := range cs {
							m, ok := ctr.(map[string]any)
							if !ok || !containerMatches(m, containers) {
								continue
							}
							matched = true
							if list {
								printEnv(streams, r, m)
								continue
							}
							m["env"] = updateEnv(m["env"], set, setOrder, remove)
						}
					}
					if !matched {
						return false, fmt.Errorf("unable to find container named %s", containers)
					}
					return !list, nil
				})
				if err != nil {
					return err
				}
				if !changed {
					continue
				}
				fmt.Fprintf(streams.Out, "%s env updated\n", r)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&containers, "containers", "c", "*", "The names of containers in the selected pod templates to change - may use wildcards")
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&all, "all", false, "If true, select all resources in the namespace of the specified resource types")
	f.BoolVar(&list, "list", false, "If true, display the environment and any changes in the standard format.")
	return cmd
}

func containerMatches(m map[string]any, pattern string) bool {
	name, _ := m["name"].(string)
	if pattern == "*" || pattern == name {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return false
}

// updateEnv sets and removes variables of a container's env list, keeping
// the order of those that stay and appending new ones.
func updateEnv(cur any, set map[string]string, order, remove []string) []any {
	list, _ := cur.([]any)
	var out []any
	seen := map[string]bool{}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if slices.Contains(remove, name) {
			continue
		}
		if v, ok := set[name]; ok {
			m = map[string]any{"name": name, "value": v}
			seen[name] = true
		}
		out = append(out, m)
	}
	for _, k := range order {
		if !seen[k] {
			out = append(out, map[string]any{"name": k, "value": set[k]})
		}
	}
	return out
}

// printEnv is kubectl's --list: a comment naming the container, then
// KEY=VALUE lines (a reference from a secret or field as a comment).
func printEnv(streams cli.Streams, r resource.Ref, m map[string]any) {
	name, _ := m["name"].(string)
	fmt.Fprintf(streams.Out, "# %s %s, container %s\n", r.Info.Kind, r.Name, name)
	list, _ := m["env"].([]any)
	for _, e := range list {
		em, _ := e.(map[string]any)
		k, _ := em["name"].(string)
		if v, ok := em["value"].(string); ok {
			fmt.Fprintf(streams.Out, "%s=%s\n", k, v)
			continue
		}
		if from, ok := em["valueFrom"].(map[string]any); ok {
			keys := slices.Sorted(maps.Keys(from))
			fmt.Fprintf(streams.Out, "# %s from %s\n", k, strings.Join(keys, ","))
			continue
		}
		fmt.Fprintf(streams.Out, "%s=\n", k)
	}
}
