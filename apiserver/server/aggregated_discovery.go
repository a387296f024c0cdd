package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/discovery"
	"github.com/minik8s/minik8s/apiserver/protobuf"
)

// Aggregated discovery: /api and /apis answer an apidiscovery.k8s.io/v2
// APIGroupDiscoveryList when the Accept header asks for one, as
// kube-apiserver's WrappedHandler decides it, and their legacy documents
// otherwise.

// apiregistrationPriority is the priority kube-aggregator gives its own
// group in the aggregated document (APIRegistrationGroupPriority), above
// every APIService's: apiregistration.k8s.io comes first.
var apiregistrationPriority = discovery.Priority{Group: 20001, Version: 0}

// crdPriority is the priority of a custom resource's group version while
// no APIService names it (kube's CRD discovery controller sets it).
var crdPriority = discovery.Priority{Group: 1000, Version: 100}

// aggregatedTarget is the conversion an Accept clause names to ask for
// the aggregated document.
var aggregatedTarget = groupVersionKind{discovery.Group, discovery.Version, discovery.Kind}

// isAggregatedDiscovery is the aggregated document's endpoint restriction
// (DiscoveryEndpointRestrictions): only that conversion, in any encoding.
func isAggregatedDiscovery(_ mediaType, t *groupVersionKind) bool {
	return t != nil && *t == aggregatedTarget
}

// noTransform is the legacy documents' restriction
// (DefaultEndpointRestrictions): no conversion at all.
func noTransform(_ mediaType, t *groupVersionKind) bool { return t == nil }

// negotiateDiscovery picks how /api or /apis answers: the aggregated
// document when a clause asks for it (first such clause wins, whatever
// clauses come before it), else the legacy document in the first
// encoding a clause without conversion names, else 406.
func negotiateDiscovery(r *http.Request) (out output, aggregated bool, err error) {
	header := r.Header.Get("Accept")
	if header == "" {
		return output{media: mediaTypes[0]}, false, nil
	}
	if out, ok := negotiate(header, isAggregatedDiscovery); ok {
		return out, true, nil
	}
	out, err = negotiateLegacy(r)
	return out, false, err
}

// negotiateLegacy picks the encoding of a legacy discovery document: no
// conversion may be asked for.
func negotiateLegacy(r *http.Request) (output, error) {
	header := r.Header.Get("Accept")
	if header == "" {
		return output{media: mediaTypes[0]}, nil
	}
	if out, ok := negotiate(header, noTransform); ok {
		return out, nil
	}
	return output{}, notAcceptable(false)
}

// negotiateResourceList is negotiateLegacy for the documents kube serves
// through go-restful (/api, /api/v1, /apis/GROUP/VERSION):
// an Accept header naming no encoding the route produces is refused by
// go-restful first, with its own message; the aggregated document is
// not served there.
func negotiateResourceList(r *http.Request) (output, error) {
	header := r.Header.Get("Accept")
	if header == "" {
		return output{media: mediaTypes[0]}, nil
	}
	if !restfulAccepts(header) {
		return output{}, restfulNotAcceptable()
	}
	return negotiateLegacy(r)
}

// restfulNotAcceptable is go-restful's 406, as kube-apiserver writes it
// (an empty details object included).
func restfulNotAcceptable() error {
	return &apierrors.StatusError{ErrStatus: api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure,
		Message:  "406: Not Acceptable\n\nAvailable representations: " + strings.Join(mediaTypeNames(false), ", "),
		Reason:   api.StatusReasonNotAcceptable,
		Details:  &api.StatusDetails{},
		Code:     http.StatusNotAcceptable,
	}}
}

// restfulAccepts is go-restful's Route.matchesAccept: some clause,
// parameters aside, is */*, TYPE/* or an encoding served.
func restfulAccepts(header string) bool {
	for _, part := range strings.Split(header, ",") {
		t := strings.TrimSpace(strings.Split(part, ";")[0])
		if t == "*/*" {
			return true
		}
		for _, m := range mediaTypes {
			if t == m.String() || t == m.typ+"/*" {
				return true
			}
		}
	}
	return false
}

// serveAPIVersions serves /api; its legacy document is a go-restful
// route in kube, negotiated as the resource lists are.
func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	out, aggregated, err := negotiateDiscovery(r)
	if !aggregated {
		out, err = negotiateResourceList(r)
	}
	switch {
	case err != nil:
		writeError(w, r, err)
	case aggregated:
		s.writeAggregated(w, r, out, s.aggregatedCore())
	default:
		writeJSONIn(w, out.media, http.StatusOK, apiVersions{
			TypeMeta: api.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: s.addresses(r),
		})
	}
}

// serveAPIGroupList serves /apis.
func (s *Server) serveAPIGroupList(w http.ResponseWriter, r *http.Request) {
	out, aggregated, err := negotiateDiscovery(r)
	switch {
	case err != nil:
		writeError(w, r, err)
	case aggregated:
		s.writeAggregated(w, r, out, s.aggregatedAPIs())
	default:
		s.writeAPIGroupList(w, out.media)
	}
}

// serveLegacyAPIGroupList serves /apis/, which kube-aggregator answers
// with the legacy document only.
func (s *Server) serveLegacyAPIGroupList(w http.ResponseWriter, r *http.Request) {
	out, err := negotiateLegacy(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.writeAPIGroupList(w, out.media)
}

func (s *Server) writeAPIGroupList(w http.ResponseWriter, media mediaType) {
	groups := s.groups()
	for i := range groups {
		groups[i].TypeMeta = api.TypeMeta{}
	}
	writeJSONIn(w, media, http.StatusOK, apiGroupList{TypeMeta: api.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: groups})
}

// writeAggregated writes the aggregated document of groups as
// kube-apiserver's ServeHTTPWithETag does: the quoted ETag, Vary: Accept
// and Cache-Control: public, 304 with no body when If-None-Match is that
// ETag, else the document in the negotiated encoding, its Content-Type
// naming the conversion.
func (s *Server) writeAggregated(w http.ResponseWriter, r *http.Request, out output, groups []discovery.APIGroupDiscovery) {
	doc, err := discovery.Encode(groups)
	if err != nil {
		writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	etag := strconv.Quote(doc.ETag)
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	ct := out.media.String() + ";g=" + discovery.Group + ";v=" + discovery.Version + ";as=" + discovery.Kind
	switch out.media {
	case mediaYAML:
		data, err := yaml.JSONToYAML(doc.JSON)
		if err != nil {
			writeError(w, r, apierrors.NewInternalError(err))
			return
		}
		write(w, http.StatusOK, ct, data)
	case mediaProtobuf:
		data, err := protobuf.Encode(doc.JSON)
		if err != nil {
			writeError(w, r, apierrors.NewInternalError(err))
			return
		}
		write(w, http.StatusOK, ct, data)
	default:
		write(w, http.StatusOK, ct, doc.JSON)
	}
}

// aggregatedCore is /api's aggregated document: the core group, unnamed,
// its one version.
func (s *Server) aggregatedCore() []discovery.APIGroupDiscovery {
	list, _ := s.resourceList("", "v1")
	resources, err := discovery.FromAPIResources(list.Resources)
	if err != nil {
		s.log.Error("core resources for aggregated discovery", "err", err)
	}
	return []discovery.APIGroupDiscovery{{Versions: []discovery.APIVersionDiscovery{
		{Version: "v1", Resources: resources, Freshness: discovery.Current}}}}
}

// aggregatedAPIs is /apis's aggregated document: the groups served here
// (built-in and custom), Current, and those of remote APIServices as the
// aggregator last fetched them (Stale when it could not), which win over
// a group version served here too, as their proxy does; ordered by the
// APIServices' priorities (discovery.Sort).
func (s *Server) aggregatedAPIs() []discovery.APIGroupDiscovery {
	type gvKey = discovery.GroupVersion
	var remote []discovery.Remote
	var prios map[gvKey]discovery.Priority
	if s.cfg.Aggregator != nil {
		remote = s.cfg.Aggregator.Discovery()
		prios = s.cfg.Aggregator.Priorities()
	}
	isRemote := map[gvKey]bool{}
	for _, r := range remote {
		isRemote[gvKey{Group: r.Group, Version: r.Version.Version}] = true
	}

	// The local group versions, in first-seen order, their built-in
	// resources as legacy entries and their custom ones converted apart.
	var order []gvKey
	builtin := map[gvKey][]apiResource{}
	custom := map[gvKey][]discovery.APIResourceDiscovery{}
	for _, ri := range s.servedResources() {
		k := gvKey{Group: ri.Group, Version: ri.Version}
		if ri.Group == "" || isRemote[k] {
			continue
		}
		if _, ok := builtin[k]; !ok {
			if _, ok := custom[k]; !ok {
				order = append(order, k)
				builtin[k] = nil
			}
		}
		if ri.custom != nil {
			custom[k] = append(custom[k], customDiscovery(ri))
			continue
		}
		builtin[k] = append(builtin[k], legacyEntries(ri)...)
	}

	byGroup := map[string]*discovery.APIGroupDiscovery{}
	var groups []*discovery.APIGroupDiscovery
	add := func(group string, v discovery.APIVersionDiscovery) {
		g, ok := byGroup[group]
		if !ok {
			g = &discovery.APIGroupDiscovery{Metadata: discovery.ObjectMeta{Name: group}}
			byGroup[group] = g
			groups = append(groups, g)
		}
		g.Versions = append(g.Versions, v)
	}
	for _, k := range order {
		entries := builtin[k]
		sortResources(entries)
		resources, err := discovery.FromAPIResources(entries)
		if err != nil {
			s.log.Error("resources for aggregated discovery", "groupVersion", k.Group+"/"+k.Version, "err", err)
		}
		cr := custom[k]
		slices.SortStableFunc(cr, func(a, b discovery.APIResourceDiscovery) int { return strings.Compare(a.Resource, b.Resource) })
		add(k.Group, discovery.APIVersionDiscovery{Version: k.Version, Resources: append(resources, cr...), Freshness: discovery.Current})
	}
	for _, r := range remote {
		add(r.Group, r.Version)
	}

	out := make([]discovery.APIGroupDiscovery, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	discovery.Sort(out, func(gv discovery.GroupVersion) discovery.Priority {
		if gv.Group == "apiregistration.k8s.io" && gv.Version == "v1" {
			return apiregistrationPriority
		}
		if p, ok := prios[gv]; ok {
			return p
		}
		if len(custom[gv]) > 0 {
			return crdPriority
		}
		return discovery.DefaultPriority
	})
	return out
}

// customVerbs are a custom resource's verbs in kube's order (the CRD
// discovery controller's), and those left while its CRD terminates.
var (
	customVerbs            = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	customTerminatingVerbs = []string{"delete", "deletecollection", "get", "list", "watch"}
)

// customDiscovery is a custom resource's entry as kube's CRD discovery
// controller makes it: responseKind with its group and version, status
// then scale.
func customDiscovery(ri servedResource) discovery.APIResourceDiscovery {
	verbs := customVerbs
	if ri.custom.Terminating.Load() {
		verbs = customTerminatingVerbs
	}
	scope := discovery.ScopeCluster
	if ri.Namespaced {
		scope = discovery.ScopeNamespace
	}
	kind := &discovery.GroupVersionKind{Group: ri.Group, Version: ri.Version, Kind: ri.Kind}
	out := discovery.APIResourceDiscovery{Resource: ri.Resource, ResponseKind: kind, Scope: scope, SingularResource: ri.Singular,
		Verbs: verbs, ShortNames: ri.ShortNames, Categories: ri.Categories}
	if slices.Contains(ri.Subresources, "status") {
		out.Subresources = append(out.Subresources, discovery.APISubresourceDiscovery{Subresource: "status", ResponseKind: kind, Verbs: []string{"get", "patch", "update"}})
	}
	if slices.Contains(ri.Subresources, "scale") {
		out.Subresources = append(out.Subresources, discovery.APISubresourceDiscovery{Subresource: "scale",
			ResponseKind: &discovery.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}, Verbs: []string{"get", "patch", "update"}})
	}
	return out
}
