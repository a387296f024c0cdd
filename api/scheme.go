package api

import (
	"slices"
	"strings"
)

// ResourceInfo describes one served resource: its group/version/kind, its
// plural name in URLs, whether it is namespaced, and how to make an empty
// object of it. The apiserver, the client and the CLI all read the table of
// them (Resources, in kinds.go), so a kind is declared once.
type ResourceInfo struct {
	Group      string // "" for core
	Version    string // "v1"
	Kind       string // "Pod"
	Resource   string // plural, lower case: "pods"
	Singular   string // "pod"
	ShortNames []string
	Namespaced bool
	// Subresources served besides the main resource ("status", "scale", "binding").
	Subresources []string
	// Categories are the groupings kubectl expands ("all" for kubectl get
	// all), as discovery publishes them.
	Categories []string
	// Verbs are the verbs the resource serves, as discovery lists them;
	// nil is every verb of a stored resource (create, delete,
	// deletecollection, get, list, patch, update, watch).
	Verbs []string
	// New returns a pointer to an empty object of this kind.
	New func() Object
}

// GroupVersion returns "v1" for core and "group/version" otherwise, the
// value of apiVersion.
func (r ResourceInfo) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// ListKind returns the kind of the list type, "PodList".
func (r ResourceInfo) ListKind() string { return r.Kind + "List" }

// HasSubresource reports whether sub is served for this resource.
func (r ResourceInfo) HasSubresource(sub string) bool { return slices.Contains(r.Subresources, sub) }

// newOf is the New of kind T: a pointer to an empty T.
func newOf[T any, P interface {
	*T
	Object
}]() Object {
	return P(new(T))
}

// LookupResource finds a resource by group and plural name: its preferred
// version when several are served.
func LookupResource(group, resource string) (ResourceInfo, bool) {
	for _, r := range Resources {
		if r.Group == group && r.Resource == resource {
			return r, true
		}
	}
	return ResourceInfo{}, false
}

// Preferred reports whether r is the preferred version of its resource:
// the first listed in Resources of the versions served for its group and resource
// (autoscaling/v2 HorizontalPodAutoscalers over v1). Whoever walks every
// resource once (garbage collection, namespace deletion) walks these.
func (r ResourceInfo) Preferred() bool {
	first, ok := LookupResource(r.Group, r.Resource)
	return ok && first.Version == r.Version
}

// LookupKind finds a resource by apiVersion ("apps/v1") and kind.
func LookupKind(apiVersion, kind string) (ResourceInfo, bool) {
	for _, r := range Resources {
		if r.GroupVersion() == apiVersion && r.Kind == kind {
			return r, true
		}
	}
	return ResourceInfo{}, false
}

// FindResource resolves what a user typed ("po", "pods", "pod",
// "deployments.apps", "Deployment") to a resource, as kubectl does.
func FindResource(name string) (ResourceInfo, bool) {
	n := strings.ToLower(name)
	group := ""
	if i := strings.IndexByte(n, '.'); i > 0 {
		n, group = n[:i], n[i+1:]
	}
	for _, r := range Resources {
		if group != "" && r.Group != group {
			continue
		}
		if n == r.Resource || n == r.Singular || n == strings.ToLower(r.Kind) {
			return r, true
		}
		for _, s := range r.ShortNames {
			if n == s {
				return r, true
			}
		}
	}
	return ResourceInfo{}, false
}
