package resource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// allTypes is what "all" expands to, as in kubectl's "all" category,
// limited to the kinds minik8s serves.
var allTypes = []string{"pods", "services", "daemonsets", "deployments", "replicasets", "statefulsets", "jobs", "cronjobs"}

// Resolve turns "po,deploy" or "all" into resources, with kubectl's error
// for an unknown type.
func Resolve(typeArg string) ([]api.ResourceInfo, error) {
	return resolve(typeArg, api.FindResource, builtinCategory)
}

// Resolve is the package's Resolve with the types and categories of m.
func (m *Mapper) Resolve(typeArg string) ([]api.ResourceInfo, error) {
	return resolve(typeArg, m.Find, m.category)
}

// category is what a category name expands to, ok false when name is none.
type category func(name string) ([]api.ResourceInfo, bool)

// builtinCategory is "all" without discovery: the built-in kinds of
// kubectl's legacy list.
func builtinCategory(name string) ([]api.ResourceInfo, bool) {
	if name != "all" {
		return nil, false
	}
	var out []api.ResourceInfo
	for _, a := range allTypes {
		if info, ok := api.FindResource(a); ok {
			out = append(out, info)
		}
	}
	return out, true
}

// category expands "all" with what discovery lists in it, custom
// resources included; kubectl's legacy list when discovery fails.
func (m *Mapper) category(name string) ([]api.ResourceInfo, bool) {
	if name != "all" {
		return nil, false
	}
	if infos, ok := m.Category(name); ok {
		return infos, true
	}
	return builtinCategory(name)
}

func resolve(typeArg string, find Finder, categories category) ([]api.ResourceInfo, error) {
	var out []api.ResourceInfo
	for _, t := range strings.Split(typeArg, ",") {
		if infos, ok := categories(t); ok {
			out = append(out, infos...)
			continue
		}
		info, ok := find(t)
		if !ok {
			return nil, unknownType(t)
		}
		out = append(out, info)
	}
	return out, nil
}

// BuiltIn says whether info is a kind minik8s builds in, which kubectl
// knows the schema of (strategic merge patches); false for custom and
// aggregated resources found through discovery.
func BuiltIn(info api.ResourceInfo) bool {
	_, ok := api.LookupKind(info.GroupVersion(), info.Kind)
	return ok
}

// Ref names one object.
type Ref struct {
	Info      api.ResourceInfo
	Namespace string // "" for cluster-scoped kinds
	Name      string
}

// String is kubectl's "kind.group/name".
func (r Ref) String() string { return KindName(r.Info) + "/" + r.Name }

// KindName is kubectl's "kind.group" prefix: "pod", "deployment.apps".
func KindName(info api.ResourceInfo) string {
	k := strings.ToLower(info.Kind)
	if info.Group != "" {
		return k + "." + info.Group
	}
	return k
}

// Selection is what the arguments ask for before any object is read.
type Selection struct {
	// Refs are named objects.
	Refs []Ref
	// Types are listed with Selector (-l) or in full (--all).
	Types []api.ResourceInfo
}

// Parse reads "TYPE NAME...", "TYPE/NAME..." or "TYPE[,TYPE]" (the latter
// only when listing is allowed: get, or a selector or --all). ns is the
// namespace of namespaced kinds.
func Parse(args []string, ns string, listing bool) (Selection, error) {
	return ParseWith(args, ns, listing, api.FindResource)
}

// ParseWith is Parse with the types resolved by find (Discovered, for the
// commands that reach custom resources).
func ParseWith(args []string, ns string, listing bool, find Finder) (Selection, error) {
	return parse(args, ns, listing, find, builtinCategory)
}

// Parse is the package's Parse with the types and categories of m.
func (m *Mapper) Parse(args []string, ns string, listing bool) (Selection, error) {
	return parse(args, ns, listing, m.Find, m.category)
}

func parse(args []string, ns string, listing bool, find Finder, categories category) (Selection, error) {
	var sel Selection
	if len(args) == 0 {
		return sel, errors.New("You must provide one or more resources by argument or filename.")
	}
	args = typesTimesNames(args)
	if strings.Contains(args[0], "/") {
		for _, a := range args {
			t, name, ok := strings.Cut(a, "/")
			if !ok || name == "" {
				return sel, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'")
			}
			info, ok := find(t)
			if !ok {
				return sel, unknownType(t)
			}
			sel.Refs = append(sel.Refs, ref(info, ns, name))
		}
		return sel, nil
	}
	infos, err := resolve(args[0], find, categories)
	if err != nil {
		return sel, err
	}
	names := args[1:]
	if len(names) == 0 {
		if !listing {
			return sel, errors.New("resource(s) were provided, but no name was specified")
		}
		sel.Types = infos
		return sel, nil
	}
	if len(infos) > 1 {
		return sel, errors.New("you must specify only one resource type when naming objects")
	}
	for _, n := range names {
		if strings.Contains(n, "/") {
			return sel, errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'")
		}
		sel.Refs = append(sel.Refs, ref(infos[0], ns, n))
	}
	return sel, nil
}

// typesTimesNames is kubectl's normalizeMultipleResourcesArgs: "T1,T2
// N1 N2" names every object of each type, "T1/N1 T1/N2 T2/N1 T2/N2".
func typesTimesNames(args []string) []string {
	if len(args) < 2 || strings.Contains(args[0], "/") {
		return args
	}
	var types []string
	for _, t := range strings.Split(args[0], ",") {
		if t != "" && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(types) < 2 {
		return args
	}
	var out []string
	for _, t := range types {
		for _, n := range args[1:] {
			out = append(out, t+"/"+n)
		}
	}
	return out
}

func ref(info api.ResourceInfo, ns, name string) Ref {
	if !info.Namespaced {
		ns = ""
	}
	return Ref{Info: info, Namespace: ns, Name: name}
}

// Expand lists the Types of sel with the selectors of lo (every object when
// they are empty) and returns them after the named Refs.
func (sel Selection) Expand(ctx context.Context, c *client.Client, ns string, lo client.ListOptions) ([]Ref, error) {
	out := append([]Ref(nil), sel.Refs...)
	for _, info := range sel.Types {
		lns := ns
		if !info.Namespaced {
			lns = ""
		}
		l, err := c.Dynamic(info).Namespace(lns).List(ctx, lo)
		if err != nil {
			return nil, err
		}
		for _, u := range l.Items {
			out = append(out, Ref{Info: info, Namespace: u.GetNamespace(), Name: u.GetName()})
		}
	}
	return out, nil
}

// UID is metadata.uid.
func UID(u *client.Unstructured) string {
	md, _ := u.Object["metadata"].(map[string]any)
	s, _ := md["uid"].(string)
	return s
}

// WaitGone polls until name is gone or replaced by an object with another
// uid (uid "" accepts any), or ctx ends.
func WaitGone(ctx context.Context, d *client.DynamicClient, name, uid string) error {
	for {
		u, err := d.Get(ctx, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if uid != "" && UID(u) != uid {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
