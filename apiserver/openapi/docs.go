package openapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/version"
)

// Docs holds the generated documents. The schemas server-side apply needs
// are made by New; the documents themselves (a few MB of JSON, and tens of
// MB of garbage to make) only on the first request for one, as
// kube-apiserver builds its specs lazily, and are kept gzipped alone.
type Docs struct {
	// resources (sorted) and patchFor are what the documents are built from.
	resources []api.ResourceInfo
	patchFor  func(kind string) patchSchema
	// baseV2 and baseV3 are the documents of the built-in kinds, which
	// an extension is added to; made once by base.
	baseOnce sync.Once
	baseErr  error
	baseV2   *representations
	baseV3   map[string]*representations

	// mu guards what SetExtension replaces: the extension, the documents
	// made with it and their date.
	mu       sync.RWMutex
	modified time.Time
	// ext is the current extension (nil: none yet). v2, and v3 with
	// v3Index, are the documents with ext; nil until asked for since ext
	// was set. v2Build and v3Build serialise those builds.
	ext     *Extension
	v2      *representations
	v3Index *representations
	// v3 maps "api/v1", "apis/apps/v1" to the group-version's document.
	v3               map[string]*representations
	v2Build, v3Build sync.Mutex
	// schemas are the OpenAPI v3 definitions of every group-version, by name.
	schemas []byte
}

// Schemas returns the OpenAPI v3 schemas of every served type, as one JSON
// object keyed by definition name (the union of the group-versions'
// components.schemas): what server-side apply's type converter is built
// from, so the merge follows the published list types and keys.
func (d *Docs) Schemas() []byte { return d.schemas }

// New generates the OpenAPI v2 and v3 models of the given resources and
// the v3 schemas; the documents are encoded when first asked for. It fails
// if a type cannot be described (a field whose JSON encoding the generator
// does not know), rather than serve a schema that lies.
func New(resources []api.ResourceInfo) (*Docs, error) {
	return build(resources, kubernetesPatchSchema)
}

func build(resources []api.ResourceInfo, patchFor func(kind string) patchSchema) (*Docs, error) {
	rs := slices.Clone(resources)
	// Core first, so the types it shares with other groups get core names
	// when nothing else decides; then by group, version and resource.
	slices.SortFunc(rs, func(a, b api.ResourceInfo) int {
		if (a.Group == "") != (b.Group == "") {
			if a.Group == "" {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Resource, b.Resource))
	})
	for i := 1; i < len(rs); i++ {
		if rs[i].Group == rs[i-1].Group && rs[i].Version == rs[i-1].Version && rs[i].Resource == rs[i-1].Resource {
			return nil, fmt.Errorf("resource %s/%s is listed twice", rs[i].GroupVersion(), rs[i].Resource)
		}
	}
	d := &Docs{resources: rs, patchFor: patchFor, modified: time.Now()}
	// Both models are made now, so that a type that cannot be described
	// fails the start; they are cheap beside encoding the documents.
	if _, err := buildModel(v2, rs, patchFor); err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	m3, err := buildModel(v3, rs, patchFor)
	if err != nil {
		return nil, fmt.Errorf("openapi v3: %w", err)
	}
	if d.schemas, err = json.Marshal(m3.defs); err != nil {
		return nil, fmt.Errorf("encode openapi v3 schemas: %w", err)
	}
	return d, nil
}

// base encodes the built-in documents, once.
func (d *Docs) base() error {
	d.baseOnce.Do(func() { d.baseErr = d.encodeBase() })
	return d.baseErr
}

func (d *Docs) encodeBase() error {
	m2, err := buildModel(v2, d.resources, d.patchFor)
	if err != nil {
		return fmt.Errorf("openapi v2: %w", err)
	}
	v2JSON, err := json.Marshal(m2.v2Document())
	if err != nil {
		return fmt.Errorf("encode openapi v2: %w", err)
	}
	d.baseV2 = newRepresentations(v2JSON, v2ProtoType, v2ToProto)

	m3, err := buildModel(v3, d.resources, d.patchFor)
	if err != nil {
		return fmt.Errorf("openapi v3: %w", err)
	}
	d.baseV3 = map[string]*representations{}
	for _, gv := range m3.groupVersions {
		data, err := json.Marshal(m3.v3Document(gv))
		if err != nil {
			return fmt.Errorf("encode openapi v3 %s: %w", gv, err)
		}
		d.baseV3[gv] = newRepresentations(data, v3ProtoType, v3ToProto)
	}
	return nil
}

// v3IndexOf is the /openapi/v3 discovery document of the group-versions'
// documents, each at its hashed URL.
func v3IndexOf(docs map[string]*representations) (*representations, error) {
	index := v3Discovery{Paths: map[string]v3DiscoveryEntry{}}
	for gv, rep := range docs {
		index.Paths[gv] = v3DiscoveryEntry{ServerRelativeURL: "/openapi/v3/" + gv + "?hash=" + rep.etag}
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return nil, fmt.Errorf("encode openapi v3 discovery: %w", err)
	}
	return newRepresentations(indexJSON, "", nil), nil
}

// model is what one dialect's documents are made of.
type model struct {
	d     dialect
	defs  map[string]*schema
	paths []pathItem
	// byGV lists the paths of each group-version ("api/v1", "apis/apps/v1").
	byGV          map[string][]pathItem
	groupVersions []string
}

// subresourceTypes are the kinds of the subresources whose objects are not
// the resource's own kind.
var subresourceTypes = map[string]struct {
	gvk gvk
	typ reflect.Type
}{
	"scale":    {gvk{Group: "autoscaling", Version: "v1", Kind: "Scale"}, reflect.TypeFor[api.Scale]()},
	"eviction": {gvk{Group: "policy", Version: "v1", Kind: "Eviction"}, reflect.TypeFor[api.Eviction]()},
	"binding":  {gvk{Version: "v1", Kind: "Binding"}, reflect.TypeFor[api.Binding]()},
}

func groupPrefix(group, version string) string {
	if group == "apiregistration.k8s.io" {
		return "io.k8s.kube-aggregator.pkg.apis.apiregistration." + version
	}
	if group == "" {
		group = "core"
	}
	if group == api.APIExtensionsGroupName {
		return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions." + version
	}
	g, _, _ := strings.Cut(group, ".")
	return "io.k8s.api." + g + "." + version
}

// gvPath is the group-version as the v3 discovery document keys it.
func gvPath(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

func buildModel(d dialect, rs []api.ResourceInfo, patchFor func(kind string) patchSchema) (*model, error) {
	b := newBuilder(d, patchFor)
	m := &model{d: d, defs: b.defs, byGV: map[string][]pathItem{}}

	// The envelopes every group-version uses.
	var served []gvk
	for _, t := range []reflect.Type{reflect.TypeFor[api.Status](), reflect.TypeFor[api.DeleteOptions](), reflect.TypeFor[api.WatchEvent]()} {
		if _, err := b.definition(t, walk{prefix: metaPrefix}); err != nil {
			return nil, err
		}
	}
	b.defs[patchName] = &schema{Type: "object",
		Description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}
	b.defs[statusName].GroupVersionKind = []gvk{{Version: "v1", Kind: "Status"}}

	subs := map[string]subresourceKind{}
	for _, ri := range rs {
		if ri.New == nil {
			return nil, fmt.Errorf("resource %s/%s has no New function", ri.GroupVersion(), ri.Resource)
		}
		t := reflect.TypeOf(ri.New())
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return nil, fmt.Errorf("resource %s/%s: New returns %s, not a pointer to a struct", ri.GroupVersion(), ri.Resource, t)
		}
		t = t.Elem()
		ref, err := b.kindDefinition(t, b.root(groupPrefix(ri.Group, ri.Version), ri.Kind), ri.Kind)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", ri.Kind, err)
		}
		kindDef := strings.TrimPrefix(ref.Ref, d.refPrefix())
		kind := kindRef{def: kindDef, gvk: gvk{Group: ri.Group, Version: ri.Version, Kind: ri.Kind}}
		addGVK(b.defs[kindDef], kind.gvk)
		describeObject(d, b.defs[kindDef], "Standard object's metadata.")

		var list kindRef
		if !isReview(ri) {
			if list, err = b.listDefinition(kindDef, ri); err != nil {
				return nil, fmt.Errorf("kind %s: %w", ri.ListKind(), err)
			}
		}
		for _, sub := range ri.Subresources {
			st, ok := subresourceTypes[sub]
			if !ok {
				continue
			}
			r, err := b.kindDefinition(st.typ, b.root(groupPrefix(st.gvk.Group, st.gvk.Version), st.gvk.Kind), st.gvk.Kind)
			if err != nil {
				return nil, fmt.Errorf("subresource %s/%s: %w", ri.Resource, sub, err)
			}
			name := strings.TrimPrefix(r.Ref, d.refPrefix())
			addGVK(b.defs[name], st.gvk)
			describeObject(d, b.defs[name], "Standard object's metadata.")
			subs[sub] = subresourceKind{ref: kindRef{def: name, gvk: st.gvk}}
		}

		items := resourcePaths(ri, kind, list, subs)
		gv := gvPath(ri.Group, ri.Version)
		if _, ok := m.byGV[gv]; !ok {
			m.groupVersions = append(m.groupVersions, gv)
			served = append(served, gvk{Group: ri.Group, Version: ri.Version})
		}
		m.byGV[gv] = append(m.byGV[gv], items...)
		m.paths = append(m.paths, items...)
	}
	// Kubernetes accepts DeleteOptions and streams WatchEvents in every
	// group-version.
	for _, g := range served {
		addGVK(b.defs[deleteOptsName], gvk{Group: g.Group, Version: g.Version, Kind: "DeleteOptions"})
		addGVK(b.defs[watchEventName], gvk{Group: g.Group, Version: g.Version, Kind: "WatchEvent"})
	}
	slices.Sort(m.groupVersions)
	return m, nil
}

// listDefinition adds the List kind of a resource, shaped by api.List.
func (b *builder) listDefinition(kindDef string, ri api.ResourceInfo) (kindRef, error) {
	// api.List[any] gives the envelope without adding an item definition;
	// the items then point at the kind.
	s, err := b.structSchema(reflect.TypeFor[api.List[any]](), walk{prefix: metaPrefix})
	if err != nil {
		return kindRef{}, err
	}
	items := s.Properties["items"]
	if items == nil || items.Type != "array" {
		return kindRef{}, fmt.Errorf("api.List has no items array")
	}
	items.Items = b.d.ref(kindDef)
	items.Description = "List of " + strings.ToLower(ri.Resource[:1]) + ri.Resource[1:] + "."
	s.Required = []string{"items"}
	name := kindDef + "List"
	if t, taken := b.typeOf[name]; taken && !strings.HasPrefix(t.Name(), "List[") {
		return kindRef{}, fmt.Errorf("definition %s is both the type %s and the list of %s", name, t, ri.Kind)
	}
	ref := kindRef{def: name, gvk: gvk{Group: ri.Group, Version: ri.Version, Kind: ri.ListKind()}}
	if old, ok := b.defs[name]; ok {
		// A field of some type already reached this api.List.
		s = old
		s.Required = []string{"items"}
	}
	addGVK(s, ref.gvk)
	describeObject(b.d, s, "Standard list metadata.")
	b.defs[name] = s
	return ref, nil
}

func addGVK(s *schema, g gvk) {
	if slices.Contains(s.GroupVersionKind, g) {
		return
	}
	s.GroupVersionKind = append(s.GroupVersionKind, g)
	slices.SortFunc(s.GroupVersionKind, func(a, b gvk) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
}

// describeObject adds Kubernetes' descriptions of the envelope fields every
// kind has, which kubectl explain shows.
func describeObject(d dialect, s *schema, metadata string) {
	if p := s.Properties["apiVersion"]; p != nil {
		p.Description = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values."
	}
	if p := s.Properties["kind"]; p != nil {
		p.Description = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase."
	}
	if p := s.Properties["metadata"]; p != nil && p.Ref != "" {
		if d == v3 {
			// OpenAPI 3.0 ignores the siblings of a $ref.
			s.Properties["metadata"] = &schema{AllOf: []*schema{{Ref: p.Ref}}, Description: metadata}
		} else {
			p.Description = metadata
		}
	}
}

// info is the document's Info object.
type info struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

func docInfo() info { return info{Title: "Kubernetes", Version: version.Get().GitVersion} }

type securityScheme struct {
	Description string `json:"description,omitempty"`
	In          string `json:"in"`
	Name        string `json:"name"`
	Type        string `json:"type"`
}

var bearerToken = map[string]securityScheme{"BearerToken": {
	Description: "Bearer Token authentication", In: "header", Name: "authorization", Type: "apiKey",
}}

var bearerSecurity = []map[string][]string{{"BearerToken": {}}}
