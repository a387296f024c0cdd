package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/rbacrules"
)

// NewCommand returns "auth" with can-i and whoami.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Inspect authorization",
		Long:  "Inspect authorization",
	}
	cmd.AddCommand(newCanI(streams, g), newWhoAmI(streams, g))
	return cmd
}

// review POSTs a review to the collection of resource and decodes the
// answer into out; it returns the answer as sent.
func review(cmd *cobra.Command, g *cli.Globals, resource, namespace string, in, out any) ([]byte, error) {
	c, err := g.Client()
	if err != nil {
		return nil, err
	}
	ri := reviewInfo(resource)
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	data, err := c.Do(cmd.Context(), client.Request{Method: http.MethodPost, Path: client.ResourcePath(ri, namespace, ""), Body: body})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", ri.Kind, err)
	}
	return data, nil
}

func reviewInfo(resource string) api.ResourceInfo {
	for _, ri := range api.ReviewResources {
		if ri.Resource == resource {
			return ri
		}
	}
	panic("auth: no review kind " + resource)
}

// resourceVerbs and nonResourceURLVerbs are the verbs kubectl knows; others
// get a warning, not an error.
var (
	resourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
		"use", "bind", "impersonate", "*", "approve", "sign", "escalate", "attest"}
	nonResourceURLVerbs = []string{"get", "put", "post", "head", "options", "delete", "patch", "*"}
	// nonStandardResources are served by no API yet authorized: users and
	// groups for the impersonate verb.
	nonStandardResources = []string{"users", "groups"}
)

func newCanI(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		allNamespaces, quiet, list, noHeaders bool
		subresource                           string
	)
	cmd := &cobra.Command{
		Use:                   "can-i VERB [TYPE | TYPE/NAME | NONRESOURCEURL]",
		DisableFlagsInUseLine: true,
		Short:                 "Check whether an action is allowed",
		Long: `Check whether an action is allowed.

VERB is a logical Kubernetes API verb like 'get', 'list', 'watch', 'delete', etc. TYPE is a Kubernetes resource. Shortcuts and groups will be resolved. NONRESOURCEURL is a partial URL that starts with "/". NAME is the name of a particular Kubernetes resource. This command pairs nicely with impersonation. See --as global flag.`,
		Example: `  # Check to see if I can create pods in any namespace
  kubectl-lite auth can-i create pods --all-namespaces

  # Check to see if service account "foo" of namespace "dev" can list pods in the namespace "prod"
  kubectl-lite auth can-i list pods --as=system:serviceaccount:dev:foo -n prod

  # List all allowed actions in namespace "foo"
  kubectl-lite auth can-i --list --namespace=foo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) != 0 {
					return errors.New("list option must be specified with no arguments")
				}
				if quiet || allNamespaces || subresource != "" {
					return errors.New("list option can't be specified with neither quiet, all-namespaces nor subresource options")
				}
				ns, err := g.DefaultNamespace()
				if err != nil {
					return err
				}
				return canIList(cmd, streams, g, ns, noHeaders)
			}
			if len(args) != 2 {
				return errors.New("you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kubectl-lite auth can-i -h' for help and examples.")
			}
			if noHeaders {
				return errors.New("--no-headers cannot be set without --list specified")
			}
			ns := ""
			if !allNamespaces {
				var err error
				if ns, err = g.DefaultNamespace(); err != nil {
					return err
				}
			}
			out := streams.Out
			if quiet {
				out = io.Discard
			}
			spec, err := accessSpec(streams, args[0], args[1], ns, subresource, allNamespaces)
			if err != nil {
				return err
			}
			var sar api.SelfSubjectAccessReview
			in := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}
			if _, err := review(cmd, g, "selfsubjectaccessreviews", "", in, &sar); err != nil {
				return err
			}
			if sar.Status.Allowed {
				fmt.Fprintln(out, "yes")
				return nil
			}
			fmt.Fprint(out, "no")
			if sar.Status.Reason != "" {
				fmt.Fprintf(out, " - %v", sar.Status.Reason)
			}
			if sar.Status.EvaluationError != "" {
				fmt.Fprintf(out, " - %v", sar.Status.EvaluationError)
			}
			fmt.Fprintln(out)
			return &cli.ExitError{Code: 1}
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
	f.BoolVarP(&quiet, "quiet", "q", false, "If true, suppress output and just return the exit code.")
	f.StringVar(&subresource, "subresource", "", "SubResource such as pod/log or deployment/scale")
	f.BoolVar(&list, "list", false, "If true, prints all allowed actions.")
	f.BoolVar(&noHeaders, "no-headers", false, "If true, prints allowed actions without headers")
	return cmd
}

// accessSpec is the SelfSubjectAccessReview spec of "can-i VERB WHAT":
// WHAT is a non-resource URL ("/logs/") or TYPE[/NAME], resolved as kubectl
// resolves it (shortcuts, kinds, resource.group), unknown types kept as
// typed after a warning.
func accessSpec(streams cli.Streams, verb, what, ns, subresource string, allNamespaces bool) (map[string]any, error) {
	if strings.HasPrefix(what, "/") {
		if subresource != "" {
			return nil, errors.New("--subresource can not be used with NonResourceURL")
		}
		if !slices.Contains(nonResourceURLVerbs, verb) {
			fmt.Fprintf(streams.ErrOut, "Warning: verb '%s' is not a known verb\n", verb)
		}
		return map[string]any{"nonResourceAttributes": api.NonResourceAttributes{Verb: verb, Path: what}}, nil
	}
	typ, name, _ := strings.Cut(what, "/")
	attrs := api.ResourceAttributes{Namespace: ns, Verb: verb, Subresource: subresource, Name: name}
	ri, namespaced, ok := resolve(typ)
	switch {
	case typ == "*":
		attrs.Resource = "*"
	case ok:
		attrs.Group, attrs.Version, attrs.Resource = ri.Group, ri.Version, ri.Resource
		if !namespaced && !allNamespaces {
			if ri.Group == "" {
				fmt.Fprintf(streams.ErrOut, "Warning: resource '%s' is not namespace scoped\n", ri.Resource)
			} else {
				fmt.Fprintf(streams.ErrOut, "Warning: resource '%s' is not namespace scoped in group '%s'\n", ri.Resource, ri.Group)
			}
		}
	default:
		attrs.Resource = typ
		res, group, _ := strings.Cut(strings.ToLower(typ), ".")
		if !slices.Contains(nonStandardResources, strings.ToLower(typ)) {
			if group == "" {
				fmt.Fprintf(streams.ErrOut, "Warning: the server doesn't have a resource type '%s'\n", res)
			} else {
				fmt.Fprintf(streams.ErrOut, "Warning: the server doesn't have a resource type '%s' in group '%s'\n", res, group)
			}
		}
	}
	if !slices.Contains(resourceVerbs, verb) {
		fmt.Fprintf(streams.ErrOut, "Warning: verb '%s' is not a known verb\n", verb)
	}
	return map[string]any{"resourceAttributes": attrs}, nil
}

// resolve finds a resource type among the served kinds and the reviews.
func resolve(typ string) (api.ResourceInfo, bool, bool) {
	if ri, ok := api.FindResource(typ); ok {
		return ri, ri.Namespaced, true
	}
	n, group, _ := strings.Cut(strings.ToLower(typ), ".")
	for _, ri := range api.ReviewResources {
		if (group == "" || group == ri.Group) && (n == ri.Resource || n == ri.Singular || n == strings.ToLower(ri.Kind)) {
			return ri, ri.Namespaced, true
		}
	}
	return api.ResourceInfo{}, false, false
}

// canIList prints the SelfSubjectRulesReview of ns as kubectl does: the
// rules broken down to one verb per group, resource and name, merged back
// per resource, sorted, in a Resources / Non-Resource URLs / Resource Names
// / Verbs table.
func canIList(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, ns string, noHeaders bool) error {
	var ssrr api.SelfSubjectRulesReview
	in := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": map[string]string{"namespace": ns}}
	if _, err := review(cmd, g, "selfsubjectrulesreviews", "", in, &ssrr); err != nil {
		return err
	}
	if ssrr.Status.Incomplete {
		fmt.Fprintf(streams.ErrOut, "Warning: the list may be incomplete: %v\n", ssrr.Status.EvaluationError)
	}
	var all []api.PolicyRule
	for _, r := range ssrr.Status.ResourceRules {
		all = append(all, api.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	for _, r := range ssrr.Status.NonResourceRules {
		all = append(all, api.PolicyRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
	}
	// auth can-i --list keeps repeated verbs.
	rules := rbacrules.Compacted(all, false)
	w := tabwriter.NewWriter(streams.Out, 6, 4, 3, ' ', 0)
	if !noHeaders {
		fmt.Fprintln(w, "Resources\tNon-Resource URLs\tResource Names\tVerbs")
	}
	for _, r := range rules {
		fmt.Fprintf(w, "%s\t%v\t%v\t%v\n", rbacrules.CombineResourceGroup(r.Resources, r.APIGroups), list(r.NonResourceURLs), list(r.ResourceNames), list(r.Verbs))
	}
	return w.Flush()
}

// list formats a string list as Go's %v does: [a b].
func list(s []string) string { return "[" + strings.Join(s, " ") + "]" }

func newWhoAmI(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:                   "whoami",
		DisableFlagsInUseLine: true,
		Short:                 "Check self subject attributes",
		Long:                  "Check who you are and your attributes (groups, extra).\n\nThis command is helpful to get yourself aware of the current user attributes, especially when dynamic authentication, e.g., token webhook, auth proxy, or OIDC provider, is enabled in the Kubernetes cluster.",
		Example: `  # Get your subject attributes
  kubectl-lite auth whoami

  # Get your subject attributes in JSON format
  kubectl-lite auth whoami -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ssr api.SelfSubjectReview
			in := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": map[string]any{}}
			data, err := review(cmd, g, "selfsubjectreviews", "", in, &ssr)
			if err != nil {
				switch {
				case apierrors.IsForbidden(err):
					return errors.New("the selfsubjectreviews API is not enabled in the cluster or you do not have permission to call it")
				case apierrors.IsNotFound(err):
					return errors.New("the selfsubjectreviews API is not enabled in the cluster")
				}
				return err
			}
			switch output {
			case "":
			case "json", "yaml":
				var obj printers.Obj
				if err := json.Unmarshal(data, &obj); err != nil {
					return err
				}
				return printers.PrintObjects(streams.Out, output, []printers.Obj{obj}, false)
			default:
				return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", output)
			}
			u := ssr.Status.UserInfo
			w := tabwriter.NewWriter(streams.Out, 6, 4, 3, ' ', 0)
			fmt.Fprintln(w, "ATTRIBUTE\tVALUE")
			if u.Username != "" {
				fmt.Fprintf(w, "Username\t%s\n", u.Username)
			}
			if u.UID != "" {
				fmt.Fprintf(w, "UID\t%s\n", u.UID)
			}
			if len(u.Groups) > 0 {
				fmt.Fprintf(w, "Groups\t%s\n", list(u.Groups))
			}
			for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
				fmt.Fprintf(w, "Extra: %s\t%s\n", k, list(u.Extra[k]))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format. One of: json, yaml.")
	return cmd
}
