package discovery

import (
	"cmp"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/version"
)

// The media type parameters that ask for the aggregated document, and
// the group, version and kind they name.
const (
	Group = "apidiscovery.k8s.io"
	// Version is the only version kube-apiserver v1.37 serves: v2beta1
	// went with the AggregatedDiscoveryRemoveBetaType gate, locked on
	// since v1.35.
	Version = "v2"
	Kind    = "APIGroupDiscoveryList"
)

// Freshness of a group version's resources: Stale when they could not be
// fetched from the extension apiserver that serves them.
const (
	Current = "Current"
	Stale   = "Stale"
)

// Scopes of a resource.
const (
	ScopeNamespace = "Namespaced"
	ScopeCluster   = "Cluster"
)

// GroupVersionKind is meta/v1's, every field always written.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// ObjectMeta is the little of meta/v1 ObjectMeta a group's entry has.
type ObjectMeta struct {
	Name string `json:"name,omitempty"`
}

// APIGroupDiscoveryList is the aggregated discovery document.
type APIGroupDiscoveryList struct {
	Kind       string              `json:"kind,omitempty"`
	APIVersion string              `json:"apiVersion,omitempty"`
	Metadata   struct{}            `json:"metadata"`
	Items      []APIGroupDiscovery `json:"items"`
}

// APIGroupDiscovery is one group, its versions in preference order.
type APIGroupDiscovery struct {
	Metadata ObjectMeta            `json:"metadata"`
	Versions []APIVersionDiscovery `json:"versions,omitempty"`
}

// APIVersionDiscovery is one version of a group and its resources.
type APIVersionDiscovery struct {
	Version   string                 `json:"version"`
	Resources []APIResourceDiscovery `json:"resources,omitempty"`
	Freshness string                 `json:"freshness,omitempty"`
}

// APIResourceDiscovery is one resource and its subresources.
type APIResourceDiscovery struct {
	Resource         string                    `json:"resource"`
	ResponseKind     *GroupVersionKind         `json:"responseKind,omitempty"`
	Scope            string                    `json:"scope"`
	SingularResource string                    `json:"singularResource"`
	Verbs            []string                  `json:"verbs"`
	ShortNames       []string                  `json:"shortNames,omitempty"`
	Categories       []string                  `json:"categories,omitempty"`
	Subresources     []APISubresourceDiscovery `json:"subresources,omitempty"`
}

// APISubresourceDiscovery is one subresource.
type APISubresourceDiscovery struct {
	Subresource   string             `json:"subresource"`
	ResponseKind  *GroupVersionKind  `json:"responseKind,omitempty"`
	AcceptedTypes []GroupVersionKind `json:"acceptedTypes,omitempty"`
	Verbs         []string           `json:"verbs"`
}

// APIResource is an entry of a legacy APIResourceList (meta/v1
// APIResource); a subresource is named RESOURCE/SUBRESOURCE.
type APIResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

// APIResourceList is a legacy group version document.
type APIResourceList struct {
	GroupVersion string        `json:"groupVersion"`
	Resources    []APIResource `json:"resources"`
}

// FromAPIResources converts a legacy resource list as kube's
// ConvertGroupVersionIntoToDiscovery does: resources in the list's order,
// each subresource under its parent (a parent made up when the list has
// none), responseKind from the entry's group, version and kind.
func FromAPIResources(list []APIResource) ([]APIResourceDiscovery, error) {
	var out []APIResourceDiscovery
	parents := map[string]int{}
	for _, r := range list {
		if strings.Contains(r.Name, "/") {
			continue
		}
		out = append(out, APIResourceDiscovery{
			Resource:         r.Name,
			Scope:            scope(r.Namespaced),
			ResponseKind:     &GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
			Verbs:            nonNil(r.Verbs),
			ShortNames:       r.ShortNames,
			Categories:       r.Categories,
			SingularResource: r.SingularName,
		})
		parents[r.Name] = len(out) - 1
	}
	for _, r := range list {
		parent, sub, ok := strings.Cut(r.Name, "/")
		if !ok {
			continue
		}
		i, found := parents[parent]
		if !found {
			out = append(out, APIResourceDiscovery{Resource: parent, Scope: scope(r.Namespaced), ResponseKind: &GroupVersionKind{}})
			i = len(out) - 1
			parents[parent] = i
		}
		if out[i].Scope != scope(r.Namespaced) {
			return nil, fmt.Errorf("parent %s (scope: %s) and subresource %s (scope: %s) scope do not match", parent, out[i].Scope, sub, scope(r.Namespaced))
		}
		s := APISubresourceDiscovery{Subresource: sub, Verbs: nonNil(r.Verbs), ResponseKind: &GroupVersionKind{}}
		if r.Kind != "" {
			s.ResponseKind = &GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		}
		out[i].Subresources = append(out[i].Subresources, s)
	}
	return out, nil
}

func scope(namespaced bool) string {
	if namespaced {
		return ScopeNamespace
	}
	return ScopeCluster
}

// nonNil keeps verbs written as [] rather than null, as kube's Verbs type
// does for an empty list.
func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// Priority is an APIService's ordering of its group version.
type Priority struct{ Group, Version int32 }

// DefaultPriority is the priority of a group version no APIService
// names, kube's resource manager's default.
var DefaultPriority = Priority{Group: 1000, Version: 15}

// GroupVersion names a group version; the core group is "".
type GroupVersion struct{ Group, Version string }

// Sort orders the groups and their versions as kube's merged discovery
// does: versions by version priority (higher first), then by Kubernetes
// version order (v2 > v1 > v1beta1 > v1alpha1 > others); groups by the
// highest group priority of their versions (higher first), then by name.
// prio gives each group version's priority.
func Sort(groups []APIGroupDiscovery, prio func(GroupVersion) Priority) {
	groupPrio := map[string]int32{}
	for i := range groups {
		g := &groups[i]
		slices.SortStableFunc(g.Versions, func(a, b APIVersionDiscovery) int {
			pa, pb := prio(GroupVersion{g.Metadata.Name, a.Version}), prio(GroupVersion{g.Metadata.Name, b.Version})
			if pa.Version != pb.Version {
				return cmp.Compare(pb.Version, pa.Version)
			}
			return -version.CompareKubeAwareVersionStrings(a.Version, b.Version)
		})
		for j, v := range g.Versions {
			p := prio(GroupVersion{g.Metadata.Name, v.Version}).Group
			if j == 0 || p > groupPrio[g.Metadata.Name] {
				groupPrio[g.Metadata.Name] = p
			}
		}
	}
	slices.SortStableFunc(groups, func(a, b APIGroupDiscovery) int {
		pa, pb := groupPrio[a.Metadata.Name], groupPrio[b.Metadata.Name]
		if pa != pb {
			return cmp.Compare(pb, pa)
		}
		return strings.Compare(a.Metadata.Name, b.Metadata.Name)
	})
}

// Document is the aggregated discovery list of groups, encoded once,
// with its ETag.
type Document struct {
	// JSON is the list with its kind and apiVersion, ending in a newline
	// as kube's JSON serializer writes it.
	JSON []byte
	// ETag is kube's: the upper-case hex SHA-512 of the list's JSON
	// without kind and apiVersion, unquoted.
	ETag string
}

// Encode makes the Document of groups.
func Encode(groups []APIGroupDiscovery) (Document, error) {
	if groups == nil {
		groups = []APIGroupDiscovery{}
	}
	list := APIGroupDiscoveryList{Items: groups}
	bare, err := json.Marshal(list)
	if err != nil {
		return Document{}, err
	}
	list.Kind, list.APIVersion = Kind, Group+"/"+Version
	data, err := json.Marshal(list)
	if err != nil {
		return Document{}, err
	}
	return Document{JSON: append(data, '\n'), ETag: fmt.Sprintf("%X", sha512.Sum512(bare))}, nil
}

// Remote is the discovery of a group version an extension apiserver
// serves (a remote APIService), as the aggregator last fetched it.
type Remote struct {
	Group   string
	Version APIVersionDiscovery
}
