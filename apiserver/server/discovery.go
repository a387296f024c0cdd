package server

import (
	"net"
	"net/http"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Discovery documents, in Kubernetes' shapes (meta/v1 APIVersions,
// APIGroupList, APIGroup, APIResourceList).

type serverAddress struct {
	ClientCIDR    string `json:"clientCIDR"`
	ServerAddress string `json:"serverAddress"`
}

type apiVersions struct {
	api.TypeMeta               `json:",inline"`
	Versions                   []string        `json:"versions"`
	ServerAddressByClientCIDRs []serverAddress `json:"serverAddressByClientCIDRs"`
}

type groupVersion struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	api.TypeMeta               `json:",inline"`
	Name                       string          `json:"name"`
	Versions                   []groupVersion  `json:"versions"`
	PreferredVersion           groupVersion    `json:"preferredVersion"`
	ServerAddressByClientCIDRs []serverAddress `json:"serverAddressByClientCIDRs,omitempty"`
}

type apiGroupList struct {
	api.TypeMeta `json:",inline"`
	Groups       []apiGroup `json:"groups"`
}

type apiResource struct {
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

type apiResourceList struct {
	api.TypeMeta `json:",inline"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

var mainVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// subresourceShape gives the kind and verbs of each subresource.
func subresourceShape(ri api.ResourceInfo, sub string) apiResource {
	r := apiResource{Name: ri.Resource + "/" + sub, Namespaced: ri.Namespaced, Kind: ri.Kind}
	switch sub {
	case "status", "approval":
		r.Verbs = []string{"get", "patch", "update"}
	case "scale":
		r.Group, r.Version, r.Kind = "autoscaling", "v1", "Scale"
		r.Verbs = []string{"get", "patch", "update"}
	case "binding":
		r.Kind = "Binding"
		r.Verbs = []string{"create"}
	case "finalize":
		r.Verbs = []string{"update"}
	case "log":
		r.Kind = "Pod"
		r.Verbs = []string{"get"}
	case "eviction":
		r.Group, r.Version, r.Kind = "policy", "v1", "Eviction"
		r.Verbs = []string{"create"}
	case "token":
		r.Group, r.Version, r.Kind = "authentication.k8s.io", "v1", "TokenRequest"
		r.Verbs = []string{"create"}
	case "exec":
		r.Kind, r.Verbs = "PodExecOptions", []string{"create", "get"}
	case "attach":
		r.Kind, r.Verbs = "PodAttachOptions", []string{"create", "get"}
	case "portforward":
		r.Kind, r.Verbs = "PodPortForwardOptions", []string{"create", "get"}
	case "ephemeralcontainers":
		r.Verbs = []string{"get", "patch", "update"}
	default:
		r.Verbs = []string{"get"}
	}
	return r
}

func (s *Server) addresses(r *http.Request) []serverAddress {
	addr := s.cfg.ExternalAddress
	if addr == "" {
		addr = r.Host
		if _, _, err := net.SplitHostPort(addr); err != nil {
			addr = net.JoinHostPort(addr, "443")
		}
	}
	return []serverAddress{{ClientCIDR: "0.0.0.0/0", ServerAddress: addr}}
}

func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, apiVersions{
		TypeMeta: api.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
		ServerAddressByClientCIDRs: s.addresses(r),
	})
}

// groups returns the served groups (core excluded) with their versions.
func (s *Server) groups() []apiGroup {
	byName := map[string]*apiGroup{}
	var names []string
	for _, ri := range s.servedResources() {
		g := ri.Group
		if g == "" {
			continue
		}
		gv := groupVersion{GroupVersion: ri.GroupVersion(), Version: ri.Version}
		ag, ok := byName[g]
		if !ok {
			ag = &apiGroup{TypeMeta: api.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g, PreferredVersion: gv}
			byName[g] = ag
			names = append(names, g)
		}
		seen := false
		for _, v := range ag.Versions {
			seen = seen || v == gv
		}
		if !seen {
			ag.Versions = append(ag.Versions, gv)
		}
	}
	for _, ag := range s.aggregatedGroups() {
		if _, ok := byName[ag.Name]; ok {
			continue // served here too: the local group wins, as its APIService is Local
		}
		g := &apiGroup{TypeMeta: api.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: ag.Name}
		for _, v := range ag.Versions {
			g.Versions = append(g.Versions, groupVersion{GroupVersion: ag.Name + "/" + v, Version: v})
		}
		g.PreferredVersion = g.Versions[0]
		byName[ag.Name] = g
		names = append(names, ag.Name)
	}
	sort.Strings(names)
	out := make([]apiGroup, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

// servedResources are the stored resources, the review kinds when the
// server answers them, then the custom resources.
func (s *Server) servedResources() []servedResource {
	out := make([]servedResource, 0, len(s.cfg.Stores)+len(api.ReviewResources))
	for _, st := range s.cfg.Stores {
		verbs := mainVerbs
		if st.Info.Verbs != nil {
			verbs = st.Info.Verbs
		}
		out = append(out, servedResource{ResourceInfo: st.Info, verbs: verbs})
	}
	for _, ri := range s.computedResources() {
		out = append(out, servedResource{ResourceInfo: ri, verbs: ri.Verbs})
	}
	if s.cfg.Reviewer != nil {
		for _, ri := range api.ReviewResources {
			out = append(out, servedResource{ResourceInfo: ri, verbs: []string{"create"}})
		}
	}
	if s.cfg.Custom != nil {
		for _, cr := range s.cfg.Custom.Served() {
			ri := cr.Store.Info
			ri.Categories = cr.Categories
			out = append(out, servedResource{ResourceInfo: ri, verbs: mainVerbs})
		}
	}
	return out
}

// servedResource is a resource as discovery shows it.
type servedResource struct {
	api.ResourceInfo
	verbs []string
}

func (s *Server) serveAPIGroupList(w http.ResponseWriter, r *http.Request) {
	groups := s.groups()
	for i := range groups {
		groups[i].TypeMeta = api.TypeMeta{}
	}
	writeJSON(w, r, http.StatusOK, apiGroupList{TypeMeta: api.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: groups})
}

func (s *Server) resourceList(group, version string) (apiResourceList, bool) {
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	list := apiResourceList{TypeMeta: api.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv, Resources: []apiResource{}}
	found := false
	for _, ri := range s.servedResources() {
		if ri.Group != group || ri.Version != version {
			continue
		}
		found = true
		res := apiResource{Name: ri.Resource, SingularName: ri.Singular, Namespaced: ri.Namespaced, Kind: ri.Kind,
			Verbs: ri.verbs, ShortNames: ri.ShortNames, Categories: ri.Categories}
		list.Resources = append(list.Resources, res)
		for _, sub := range ri.Subresources {
			list.Resources = append(list.Resources, subresourceShape(ri.ResourceInfo, sub))
		}
	}
	sort.Slice(list.Resources, func(i, j int) bool { return list.Resources[i].Name < list.Resources[j].Name })
	return list, found
}

// serveDiscovery serves /api/v1, /apis/GROUP and /apis/GROUP/VERSION.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, info *request.Info) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, r)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "api":
		if list, ok := s.resourceList("", parts[1]); ok {
			writeJSON(w, r, http.StatusOK, list)
			return
		}
	case len(parts) == 2 && parts[0] == "apis":
		for _, g := range s.groups() {
			if g.Name == parts[1] {
				writeJSON(w, r, http.StatusOK, g)
				return
			}
		}
	case len(parts) == 3 && parts[0] == "apis":
		if list, ok := s.resourceList(parts[1], parts[2]); ok {
			writeJSON(w, r, http.StatusOK, list)
			return
		}
	}
	notFound(w, r)
}
