package create

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// resourceVerbs are the verbs kubectl knows for resources; another verb
// is only warned about.
var resourceVerbs = []string{"*", "get", "delete", "list", "create", "update", "patch", "watch", "proxy", "deletecollection", "use", "bind", "escalate", "impersonate"}

// nonResourceVerbs are the verbs a nonResourceURL rule may have.
var nonResourceVerbs = []string{"*", "get", "post", "put", "delete", "patch", "head", "options"}

// specialVerbs are the verbs that only apply to some group/resources, as
// "group/resource".
var specialVerbs = map[string][]string{
	"use":         {"policy/podsecuritypolicies", "extensions/podsecuritypolicies"},
	"bind":        {"rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/clusterroles"},
	"escalate":    {"rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/clusterroles"},
	"impersonate": {"/users", "/serviceaccounts", "/groups", "authentication.k8s.io/userextras"},
}

// ruleResource is one --resource: resource.group/subresource.
type ruleResource struct {
	group, resource, subresource string
}

// roleOptions are the flags create role and create clusterrole share.
type roleOptions struct {
	gen           write.Generator
	verbs         []string
	resources     []string
	resourceNames []string
}

func (o *roleOptions) bind(cmd *cobra.Command) {
	o.gen.Bind(cmd)
	cmd.Flags().StringSliceVar(&o.verbs, "verb", nil, "Verb that applies to the resources contained in the rule")
	cmd.Flags().StringSliceVar(&o.resources, "resource", nil, "Resource that the rule applies to")
	cmd.Flags().StringArrayVar(&o.resourceNames, "resource-name", nil, "Resource in the white list that the rule applies to, repeat this flag for multiple items")
}

// complete deduplicates the verbs ("*" alone replaces them all) and the
// resource names, and parses the resources (a bare "*" replaces them all),
// as kubectl's Complete does.
func (o *roleOptions) complete() (verbs []string, res []ruleResource, names []string) {
	verbs = []string{}
	for _, v := range o.verbs {
		if v == "*" {
			verbs = []string{"*"}
			break
		}
		if !slices.Contains(verbs, v) {
			verbs = append(verbs, v)
		}
	}
	for _, r := range o.resources {
		main, sub, _ := strings.Cut(r, "/")
		name, group, hasGroup := strings.Cut(main, ".")
		rr := ruleResource{group: group, resource: name, subresource: sub}
		if name == "*" && !hasGroup && !strings.Contains(r, "/") {
			res = []ruleResource{rr}
			break
		}
		res = append(res, rr)
	}
	names = []string{}
	for _, n := range o.resourceNames {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return verbs, res, names
}

// resourceMapper resolves a rule's resource as kubectl's RESTMapper
// ResourceFor does: the plural name and group of a plural, singular or
// short name; ok false if no served resource has it.
type resourceMapper func(r ruleResource) (resource, group string, ok bool)

func newResourceMapper(cmd *cobra.Command, g *cli.Globals) (resourceMapper, error) {
	c, err := g.Client()
	if err != nil {
		return nil, err
	}
	m := resource.NewMapper(cmd.Context(), c)
	return func(r ruleResource) (string, string, bool) {
		if r.resource == "" || r.resource == "*" {
			return "", "", false
		}
		name := r.resource
		if r.group != "" {
			name += "." + r.group
		}
		info, ok := m.Find(name)
		if !ok || info.Group != r.group && r.group != "" {
			return "", "", false
		}
		return info.Resource, info.Group, true
	}, nil
}

// noMatch is kubectl's error for a resource its RESTMapper does not know,
// which it prints as is, with no "error: " before it.
type noMatch struct{ r ruleResource }

func (e noMatch) Error() string {
	if e.r.group != "" {
		return fmt.Sprintf("the server doesn't have a resource type %q in group %q", e.r.resource, e.r.group)
	}
	return fmt.Sprintf("the server doesn't have a resource type %q", e.r.resource)
}

// plainError writes a noMatch to stderr as kubectl does and ends with
// exit code 1; any other error is returned as it is.
func plainError(streams cli.Streams, err error) error {
	var nm noMatch
	if errors.As(err, &nm) {
		fmt.Fprintln(streams.ErrOut, nm.Error())
		return &cli.ExitError{Code: 1}
	}
	return err
}

// flagUsage is kubectl's flag error: the error, then where to read the
// usage.
func flagUsage(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%w\nSee '%s --help' for usage.", err, cmd.CommandPath())
}

// withFlagUsage sets flagUsage on each of cmds and returns them.
func withFlagUsage(cmds ...*cobra.Command) []*cobra.Command {
	for _, c := range cmds {
		c.SetFlagErrorFunc(flagUsage)
	}
	return cmds
}

// oneName is kubectl's NameFromCommandArgs for the generators that say
// where to get help after the error.
func oneName(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return cli.UsageError(cmd, fmt.Sprintf("exactly one NAME is required, got %d", len(args)))
	}
	return nil
}

// validateResources is kubectl's validateResource: every resource named,
// the special verbs only on their resources, every resource known.
func validateResources(mapRes resourceMapper, verbs []string, res []ruleResource) error {
	for _, r := range res {
		if r.resource == "" {
			return fmt.Errorf("resource must be specified if apiGroup/subresource specified")
		}
		if r.resource == "*" {
			return nil
		}
		name, group, ok := mapRes(r)
		if !ok {
			name, group = r.resource, r.group
		}
		for _, v := range verbs {
			allowed, special := specialVerbs[v]
			if !special {
				continue
			}
			if !slices.Contains(allowed, group+"/"+name) {
				return fmt.Errorf("can not perform '%s' on '%s' in group '%s'", v, name, group)
			}
			ok = true
		}
		if !ok {
			return noMatch{r}
		}
	}
	return nil
}

// policyRules builds kubectl's rules: one per API group, sorted by group,
// then one for the nonResourceURLs.
func policyRules(mapRes resourceMapper, verbs []string, res []ruleResource, names, urls []string) []any {
	byGroup := map[string][]string{}
	for _, r := range res {
		name, group, ok := mapRes(r)
		if !ok {
			name, group = r.resource, r.group
		}
		if r.subresource != "" {
			name += "/" + r.subresource
		}
		if !slices.Contains(byGroup[group], name) {
			byGroup[group] = append(byGroup[group], name)
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	rules := []any{}
	for _, g := range groups {
		rules = append(rules, map[string]any{"verbs": verbs, "apiGroups": []string{g}, "resources": byGroup[g], "resourceNames": names})
	}
	if len(urls) > 0 {
		rules = append(rules, map[string]any{"verbs": verbs, "nonResourceURLs": urls})
	}
	return rules
}

func warnVerbs(streams cli.Streams, verbs []string) {
	for _, v := range verbs {
		if !slices.Contains(resourceVerbs, v) {
			fmt.Fprintf(streams.ErrOut, "Warning: '%s' is not a standard resource verb\n", v)
		}
	}
}

func newCreateRole(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o roleOptions
	cmd := &cobra.Command{
		Use:                   "role NAME --verb=verb --resource=resource.group/subresource [--resource-name=resourcename] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a role with single rule",
		Long:                  "Create a role with single rule.",
		Example: `  # Create a role named "pod-reader" that allows user to perform "get", "watch" and "list" on pods
  kubectl-lite create role pod-reader --verb=get --verb=list --verb=watch --resource=pods

  # Create a role named "foo" with API Group and SubResource specified
  kubectl-lite create role foo --verb=get,list,watch --resource=rs.apps,pods/status`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			verbs, res, names := o.complete()
			mapRes, err := newResourceMapper(cmd, g)
			if err != nil {
				return err
			}
			if len(verbs) == 0 {
				return fmt.Errorf("at least one verb must be specified")
			}
			warnVerbs(streams, verbs)
			if len(res) == 0 {
				return fmt.Errorf("at least one resource must be specified")
			}
			if err := validateResources(mapRes, verbs, res); err != nil {
				return plainError(streams, err)
			}
			return o.gen.Create(cmd, streams, g, map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
				"metadata": map[string]any{"name": args[0]}, "rules": policyRules(mapRes, verbs, res, names, nil)})
		},
	}
	o.bind(cmd)
	return cmd
}

// labelsFlag is component-base's MapStringString flag: "k=v,k2=v2",
// repeatable, keys and values trimmed.
type labelsFlag struct {
	m   map[string]string
	set bool
}

func (f *labelsFlag) String() string {
	pairs := make([]string, 0, len(f.m))
	for k, v := range f.m {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func (f *labelsFlag) Set(value string) error {
	if !f.set {
		f.m, f.set = map[string]string{}, true
	}
	for _, s := range strings.Split(value, ",") {
		if s == "" {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		f.m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

func (f *labelsFlag) Type() string { return "mapStringString" }

func newCreateClusterRole(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		o           roleOptions
		urls        []string
		aggregation labelsFlag
	)
	cmd := &cobra.Command{
		Use:                   "clusterrole NAME --verb=verb --resource=resource.group [--resource-name=resourcename] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a cluster role",
		Long:                  "Create a cluster role.",
		Example: `  # Create a cluster role named "pod-reader" that allows user to perform "get", "watch" and "list" on pods
  kubectl-lite create clusterrole pod-reader --verb=get,list,watch --resource=pods

  # Create a cluster role named "foo" with NonResourceURL specified
  kubectl-lite create clusterrole "foo" --verb=get --non-resource-url=/logs/*

  # Create a cluster role named "monitoring" with AggregationRule specified
  kubectl-lite create clusterrole monitoring --aggregation-rule="rbac.example.com/aggregate-to-monitoring=true"`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			nonResourceURLs := []string{}
			for _, u := range urls {
				if !slices.Contains(nonResourceURLs, u) {
					nonResourceURLs = append(nonResourceURLs, u)
				}
			}
			verbs, res, names := o.complete()
			mapRes, err := newResourceMapper(cmd, g)
			if err != nil {
				return err
			}
			obj := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
				"metadata": map[string]any{"name": args[0]}}
			if len(aggregation.m) > 0 {
				if len(nonResourceURLs) > 0 || len(verbs) > 0 || len(res) > 0 || len(names) > 0 {
					return fmt.Errorf("aggregation rule must be specified without nonResourceURLs, verbs, resources or resourceNames")
				}
				obj["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{map[string]any{"matchLabels": aggregation.m}}}
				return o.gen.Create(cmd, streams, g, obj)
			}
			if len(verbs) == 0 {
				return fmt.Errorf("at least one verb must be specified")
			}
			if len(res) == 0 && len(nonResourceURLs) == 0 {
				return fmt.Errorf("one of resource or nonResourceURL must be specified")
			}
			if len(res) > 0 {
				warnVerbs(streams, verbs)
				if err := validateResources(mapRes, verbs, res); err != nil {
					return err
				}
			}
			if len(nonResourceURLs) > 0 {
				for _, v := range verbs {
					if !slices.Contains(nonResourceVerbs, v) {
						return fmt.Errorf("invalid verb: '%s' for nonResourceURL", v)
					}
				}
				for _, u := range nonResourceURLs {
					if u == "*" {
						continue
					}
					if !strings.HasPrefix(u, "/") {
						return fmt.Errorf("nonResourceURL should start with /")
					}
					if strings.Contains(u[:len(u)-1], "*") {
						return fmt.Errorf("nonResourceURL only supports wildcard matches when '*' is at the end")
					}
				}
			}
			obj["rules"] = policyRules(mapRes, verbs, res, names, nonResourceURLs)
			return o.gen.Create(cmd, streams, g, obj)
		},
	}
	o.bind(cmd)
	cmd.Flags().StringSliceVar(&urls, "non-resource-url", nil, "A partial url that user should have access to.")
	cmd.Flags().Var(&aggregation, "aggregation-rule", "An aggregation label selector for combining ClusterRoles.")
	return cmd
}

// bindingOptions are the subjects of create rolebinding and
// clusterrolebinding.
type bindingOptions struct {
	users, groups, serviceAccounts []string
}

func (o *bindingOptions) bind(cmd *cobra.Command, what string) {
	cmd.Flags().StringArrayVar(&o.users, "user", nil, "Usernames to bind to the "+what+". The flag can be repeated to add multiple users.")
	cmd.Flags().StringArrayVar(&o.groups, "group", nil, "Groups to bind to the "+what+". The flag can be repeated to add multiple groups.")
	cmd.Flags().StringArrayVar(&o.serviceAccounts, "serviceaccount", nil, "Service accounts to bind to the "+what+", in the format <namespace>:<name>. The flag can be repeated to add multiple service accounts.")
}

// subjects lists users, then groups, then service accounts, as kubectl.
func (o *bindingOptions) subjects() ([]any, error) {
	var out []any
	for _, u := range o.users {
		out = append(out, map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": u})
	}
	for _, gr := range o.groups {
		out = append(out, map[string]any{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": gr})
	}
	for _, sa := range o.serviceAccounts {
		tokens := strings.Split(sa, ":")
		if len(tokens) != 2 || tokens[0] == "" || tokens[1] == "" {
			return nil, fmt.Errorf("serviceaccount must be <namespace>:<name>")
		}
		out = append(out, map[string]any{"kind": "ServiceAccount", "namespace": tokens[0], "name": tokens[1]})
	}
	return out, nil
}

func newCreateRoleBinding(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen               = write.Generator{Failed: "failed to create rolebinding: "}
		o                 bindingOptions
		clusterRole, role string
	)
	cmd := &cobra.Command{
		Use:                   "rolebinding NAME --clusterrole=NAME|--role=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a role binding for a particular role or cluster role",
		Long:                  "Create a role binding for a particular role or cluster role.",
		Example: `  # Create a role binding for user1, user2, and group1 using the admin cluster role
  kubectl-lite create rolebinding admin --clusterrole=admin --user=user1 --user=user2 --group=group1

  # Create a role binding for service account monitoring:sa-dev using the admin role
  kubectl-lite create rolebinding admin-binding --role=admin --serviceaccount=monitoring:sa-dev`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (clusterRole == "") == (role == "") {
				return fmt.Errorf("exactly one of clusterrole or role must be specified")
			}
			ref := map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}
			if clusterRole != "" {
				ref = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterRole}
			}
			subjects, err := o.subjects()
			if err != nil {
				return err
			}
			obj := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
				"metadata": map[string]any{"name": args[0]}, "roleRef": ref}
			if len(subjects) > 0 {
				obj["subjects"] = subjects
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "ClusterRole this RoleBinding should reference")
	cmd.Flags().StringVar(&role, "role", "", "Role this RoleBinding should reference")
	o.bind(cmd, "role")
	return cmd
}

func newCreateClusterRoleBinding(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen         = write.Generator{Failed: "failed to create clusterrolebinding: "}
		o           bindingOptions
		clusterRole string
	)
	cmd := &cobra.Command{
		Use:                   "clusterrolebinding NAME --clusterrole=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a cluster role binding for a particular cluster role",
		Long:                  "Create a cluster role binding for a particular cluster role.",
		Example: `  # Create a cluster role binding for user1, user2, and group1 using the cluster-admin cluster role
  kubectl-lite create clusterrolebinding cluster-admin --clusterrole=cluster-admin --user=user1 --user=user2 --group=group1`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			subjects, err := o.subjects()
			if err != nil {
				return err
			}
			obj := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
				"metadata": map[string]any{"name": args[0]},
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterRole}}
			if len(subjects) > 0 {
				obj["subjects"] = subjects
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "ClusterRole this ClusterRoleBinding should reference")
	_ = cmd.MarkFlagRequired("clusterrole")
	o.bind(cmd, "clusterrole")
	return cmd
}
