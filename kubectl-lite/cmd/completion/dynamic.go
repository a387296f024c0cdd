package completion

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// Register gives the commands under root kubectl's dynamic completions:
// resource types, then the names of live objects of that type (or
// TYPE/NAME), node names, pod names, context names, and the values of -o
// and -n. They are asked of the server when TAB is pressed.
func Register(root *cobra.Command, g *cli.Globals) {
	typed := typeThenName(g)
	byPath := map[string]cobra.CompletionFunc{
		"get":                typed,
		"describe":           typed,
		"delete":             typed,
		"edit":               typed,
		"label":              typed,
		"annotate":           typed,
		"wait":               typed,
		"patch":              typed,
		"expose":             typeThenNameOf(g, "deployments", "replicasets", "pods", "services"),
		"scale":              typeThenNameOf(g, "deployments", "replicasets"),
		"set image":          typeThenNameOf(g, "deployments", "replicasets", "pods", "jobs"),
		"rollout status":     typeThenNameOf(g, "deployments"),
		"rollout history":    typeThenNameOf(g, "deployments"),
		"rollout undo":       typeThenNameOf(g, "deployments"),
		"rollout restart":    typeThenNameOf(g, "deployments"),
		"rollout pause":      typeThenNameOf(g, "deployments"),
		"rollout resume":     typeThenNameOf(g, "deployments"),
		"logs":               podNames(g),
		"exec":               podNames(g),
		"cordon":             namesOf(g, "nodes"),
		"uncordon":           namesOf(g, "nodes"),
		"drain":              namesOf(g, "nodes"),
		"config use-context": contextNames(g),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if fn, ok := byPath[path]; ok && c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 {
			c.ValidArgsFunction = fn
		}
		if f := c.Flags().Lookup("output"); f != nil {
			_ = c.RegisterFlagCompletionFunc("output", fixed("json", "yaml", "name", "wide", "jsonpath=", "custom-columns="))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return listNames(cmd, g, "namespaces", toComplete, ""), cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("context", func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return contextNames(g)(cmd, nil, toComplete)
	})
}

func fixed(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// resourceNames are the names kubectl completes a type with: the plural,
// with the group for non-core kinds ("pods", "deployments.apps").
func resourceNames(only ...string) []string {
	var out []string
	for _, r := range api.Resources {
		if !r.Preferred() || len(only) > 0 && !slices.Contains(only, r.Resource) {
			continue
		}
		n := r.Resource
		if r.Group != "" {
			n += "." + r.Group
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// typeThenName completes "TYPE NAME..." and "TYPE/NAME" of any kind.
func typeThenName(g *cli.Globals) cobra.CompletionFunc { return typeThenNameOf(g) }

func typeThenNameOf(g *cli.Globals, only ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			if t, prefix, ok := strings.Cut(toComplete, "/"); ok {
				info, found := findType(cmd, g, t)
				if !found || (len(only) > 0 && !slices.Contains(only, info.Resource)) {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				var out []string
				for _, n := range listNamesOf(cmd, g, info, prefix) {
					out = append(out, t+"/"+n)
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, n := range resourceNames(only...) {
				if strings.HasPrefix(n, toComplete) {
					out = append(out, n)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.Contains(args[0], "/") || strings.Contains(args[0], ",") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		info, ok := findType(cmd, g, args[0])
		if !ok {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return without(listNamesOf(cmd, g, info, toComplete), args[1:]), cobra.ShellCompDirectiveNoFileComp
	}
}

func podNames(g *cli.Globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return listNames(cmd, g, "pods", toComplete, ""), cobra.ShellCompDirectiveNoFileComp
	}
}

func namesOf(g *cli.Globals, resource string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return without(listNames(cmd, g, resource, toComplete, ""), args), cobra.ShellCompDirectiveNoFileComp
	}
}

func contextNames(g *cli.Globals) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := g.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, c := range cfg.Contexts {
			if strings.HasPrefix(c.Name, toComplete) {
				out = append(out, c.Name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// listNames lists the objects of resource in the command's namespace whose
// names start with prefix; any error is no completion, never a message.
func listNames(cmd *cobra.Command, g *cli.Globals, resource, prefix, group string) []string {
	info, ok := api.LookupResource(group, resource)
	if !ok {
		return nil
	}
	return listNamesOf(cmd, g, info, prefix)
}

// findType resolves a typed TYPE as the verbs do: built in, else through
// discovery (custom resources).
func findType(cmd *cobra.Command, g *cli.Globals, t string) (api.ResourceInfo, bool) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	m, err := g.Mapper(ctx)
	if err != nil {
		return api.ResourceInfo{}, false
	}
	return m.Find(t)
}

// listNamesOf lists the names of info's objects starting with prefix.
func listNamesOf(cmd *cobra.Command, g *cli.Globals, info api.ResourceInfo, prefix string) []string {
	c, err := g.Client()
	if err != nil {
		return nil
	}
	ns := ""
	if info.Namespaced {
		if ns, err = g.DefaultNamespace(); err != nil {
			return nil
		}
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := c.Dynamic(info).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, u := range l.Items {
		if n := u.GetName(); strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// without drops names already on the command line.
func without(names, given []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(given, n) {
			out = append(out, n)
		}
	}
	return out
}
