package server

import (
	"net"
	"net/http"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/discovery"
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

// apiResource is an entry of a resource list (meta/v1 APIResource).
type apiResource = discovery.APIResource

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
	case "ephemeralcontainers", "resize":
		r.Verbs = []string{"get", "patch", "update"}
	case "proxy":
		r.Kind, r.Verbs = ri.Kind+"ProxyOptions", []string{"create", "delete", "get", "patch", "update"}
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

// groups returns the groups /apis lists (the core group aside), in the
// aggregated document's order: by their APIServices' priorities, each
// group's versions in preference order, the preferred first.
func (s *Server) groups() []apiGroup {
	doc := s.aggregatedAPIs()
	out := make([]apiGroup, 0, len(doc))
	for _, g := range doc {
		ag := apiGroup{TypeMeta: api.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g.Metadata.Name}
		for _, v := range g.Versions {
			ag.Versions = append(ag.Versions, groupVersion{GroupVersion: g.Metadata.Name + "/" + v.Version, Version: v.Version})
		}
		if len(ag.Versions) == 0 {
			continue
		}
		ag.PreferredVersion = ag.Versions[0]
		out = append(out, ag)
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
			out = append(out, servedResource{ResourceInfo: ri, verbs: mainVerbs, custom: cr})
		}
	}
	return out
}

// servedResource is a resource as discovery shows it.
type servedResource struct {
	api.ResourceInfo
	verbs []string
	// custom is set for a custom resource.
	custom *CustomResource
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
		list.Resources = append(list.Resources, legacyEntries(ri)...)
	}
	sortResources(list.Resources)
	return list, found
}

// legacyEntries are a served resource's entries in its resource list:
// itself, then its subresources.
func legacyEntries(ri servedResource) []apiResource {
	out := []apiResource{{Name: ri.Resource, SingularName: ri.Singular, Namespaced: ri.Namespaced, Kind: ri.Kind,
		Verbs: ri.verbs, ShortNames: ri.ShortNames, Categories: ri.Categories}}
	for _, sub := range ri.Subresources {
		out = append(out, subresourceShape(ri.ResourceInfo, sub))
	}
	return out
}

// sortResources orders a resource list by name, as kube's installer does.
func sortResources(l []apiResource) {
	sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
}

// serveDiscovery serves /api/v1, /apis/GROUP and /apis/GROUP/VERSION,
// negotiated as kube-apiserver does (negotiateResourceList for the
// resource lists, the legacy documents' negotiateDiscovery for a group).
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, info *request.Info) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, r)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var (
		doc   any
		found bool
	)
	switch {
	case len(parts) == 2 && parts[0] == "api":
		doc, found = s.resourceList("", parts[1])
	case len(parts) == 2 && parts[0] == "apis":
		for _, g := range s.groups() {
			if g.Name == parts[1] {
				doc, found = g, true
			}
		}
	case len(parts) == 3 && parts[0] == "apis":
		doc, found = s.resourceList(parts[1], parts[2])
	}
	if !found {
		notFound(w, r)
		return
	}
	var out output
	var err error
	if len(parts) == 2 && parts[0] == "apis" {
		out, err = negotiateLegacy(r)
	} else {
		out, err = negotiateResourceList(r)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSONIn(w, out.media, http.StatusOK, doc)
}
