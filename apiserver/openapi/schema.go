package openapi

import "strings"

// dialect is the OpenAPI version a schema is rendered for: the two differ in
// where $ref points and in how a few custom-JSON types are described.
type dialect int

const (
	v2 dialect = iota
	v3
)

// refPrefix is where definitions live in a document of dialect d.
func (d dialect) refPrefix() string {
	if d == v3 {
		return "#/components/schemas/"
	}
	return "#/definitions/"
}

// ref returns a schema pointing at the definition name.
func (d dialect) ref(name string) *schema { return &schema{Ref: d.refPrefix() + name} }

// gvk is the value of x-kubernetes-group-version-kind.
type gvk struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

func (g gvk) less(o gvk) bool {
	if g.Group != o.Group {
		return g.Group < o.Group
	}
	if g.Version != o.Version {
		return g.Version < o.Version
	}
	return g.Kind < o.Kind
}

// schema is the subset of a JSON Schema (Swagger 2.0 / OpenAPI 3.0 Schema
// Object) the generator emits, with the Kubernetes extensions. Fields are in
// alphabetical order of their JSON names, as kube-apiserver prints them.
type schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	AdditionalProperties *schema            `json:"additionalProperties,omitempty"`
	AllOf                []*schema          `json:"allOf,omitempty"`
	Default              any                `json:"default,omitempty"`
	Description          string             `json:"description,omitempty"`
	Format               string             `json:"format,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	OneOf                []*schema          `json:"oneOf,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Type                 string             `json:"type,omitempty"`
	UniqueItems          bool               `json:"uniqueItems,omitempty"`
	GroupVersionKind     []gvk              `json:"x-kubernetes-group-version-kind,omitempty"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string,omitempty"`
	ListMapKeys          []string           `json:"x-kubernetes-list-map-keys,omitempty"`
	ListType             string             `json:"x-kubernetes-list-type,omitempty"`
	MapType              string             `json:"x-kubernetes-map-type,omitempty"`
	PatchMergeKey        string             `json:"x-kubernetes-patch-merge-key,omitempty"`
	PatchStrategy        string             `json:"x-kubernetes-patch-strategy,omitempty"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
}

// refs calls f with the definition name of every $ref in s, recursively.
func (s *schema) refs(prefix string, f func(name string)) {
	if s == nil {
		return
	}
	if s.Ref != "" {
		f(strings.TrimPrefix(s.Ref, prefix))
	}
	s.AdditionalProperties.refs(prefix, f)
	s.Items.refs(prefix, f)
	for _, c := range s.AllOf {
		c.refs(prefix, f)
	}
	for _, c := range s.OneOf {
		c.refs(prefix, f)
	}
	for _, c := range s.Properties {
		c.refs(prefix, f)
	}
}
