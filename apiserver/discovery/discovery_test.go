package discovery

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestFromAPIResources(t *testing.T) {
	t.Parallel()
	list := []APIResource{
		{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "list"}, ShortNames: []string{"deploy"}, Categories: []string{"all"}},
		{Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}},
		{Name: "deployments/status", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "patch", "update"}},
		// A subresource without its parent gets one made up; one with no
		// kind gets an empty responseKind.
		{Name: "orphans/status", Namespaced: false, Verbs: nil},
	}
	got, err := FromAPIResources(list)
	if err != nil {
		t.Fatal(err)
	}
	want := []APIResourceDiscovery{
		{Resource: "deployments", ResponseKind: &GroupVersionKind{Kind: "Deployment"}, Scope: ScopeNamespace, SingularResource: "deployment",
			Verbs: []string{"get", "list"}, ShortNames: []string{"deploy"}, Categories: []string{"all"},
			Subresources: []APISubresourceDiscovery{
				{Subresource: "scale", ResponseKind: &GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: []string{"get", "patch", "update"}},
				{Subresource: "status", ResponseKind: &GroupVersionKind{Kind: "Deployment"}, Verbs: []string{"get", "patch", "update"}},
			}},
		{Resource: "orphans", ResponseKind: &GroupVersionKind{}, Scope: ScopeCluster,
			Subresources: []APISubresourceDiscovery{{Subresource: "status", ResponseKind: &GroupVersionKind{}, Verbs: []string{}}}},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}

	// A subresource whose scope is not its parent's is kube's error.
	_, err = FromAPIResources([]APIResource{{Name: "a", Namespaced: true, Kind: "A"}, {Name: "a/status", Namespaced: false, Kind: "A"}})
	if err == nil || !strings.Contains(err.Error(), "scope do not match") {
		t.Errorf("mismatched scopes: %v", err)
	}
}

func TestSort(t *testing.T) {
	t.Parallel()
	groups := []APIGroupDiscovery{
		{Metadata: ObjectMeta{Name: "zeta.example.com"}, Versions: []APIVersionDiscovery{{Version: "v1alpha1"}, {Version: "v1"}, {Version: "v2beta1"}, {Version: "foo"}}},
		{Metadata: ObjectMeta{Name: "autoscaling"}, Versions: []APIVersionDiscovery{{Version: "v1"}, {Version: "v2"}}},
		{Metadata: ObjectMeta{Name: "alpha.example.com"}, Versions: []APIVersionDiscovery{{Version: "v1"}}},
		{Metadata: ObjectMeta{Name: "apps"}, Versions: []APIVersionDiscovery{{Version: "v1"}}},
	}
	prio := map[GroupVersion]Priority{
		{"autoscaling", "v1"}: {17500, 15}, {"autoscaling", "v2"}: {17500, 30},
		{"apps", "v1"}: {17800, 15},
		// A low version priority loses to the others whatever its name.
		{"zeta.example.com", "v1"}: {1000, 5},
	}
	Sort(groups, func(gv GroupVersion) Priority {
		if p, ok := prio[gv]; ok {
			return p
		}
		return DefaultPriority
	})
	var got []string
	for _, g := range groups {
		s := g.Metadata.Name + ":"
		for _, v := range g.Versions {
			s += " " + v.Version
		}
		got = append(got, s)
	}
	want := []string{"apps: v1", "autoscaling: v2 v1", "alpha.example.com: v1", "zeta.example.com: v2beta1 v1alpha1 foo v1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	doc, err := Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[]}` + "\n"; string(doc.JSON) != want {
		t.Errorf("JSON %s, want %s", doc.JSON, want)
	}
	// kube-apiserver's ETag: the SHA-512 of the list without kind and
	// apiVersion, upper-case hex.
	if want := fmt.Sprintf("%X", sha512.Sum512([]byte(`{"metadata":{},"items":[]}`))); doc.ETag != want {
		t.Errorf("ETag %s, want %s", doc.ETag, want)
	}
	other, _ := Encode([]APIGroupDiscovery{{Metadata: ObjectMeta{Name: "apps"}}})
	if other.ETag == doc.ETag {
		t.Error("two documents have the same ETag")
	}
}
