package openapi

import (
	"slices"
	"strings"
)

// Swagger 2.0 document, in kube-apiserver's layout.

type v2Doc struct {
	Swagger             string                    `json:"swagger"`
	Info                info                      `json:"info"`
	Paths               map[string]*v2PathItem    `json:"paths"`
	Definitions         map[string]*schema        `json:"definitions"`
	SecurityDefinitions map[string]securityScheme `json:"securityDefinitions"`
	Security            []map[string][]string     `json:"security"`
}

type v2PathItem struct {
	Delete     *v2Operation `json:"delete,omitempty"`
	Get        *v2Operation `json:"get,omitempty"`
	Parameters []v2Param    `json:"parameters,omitempty"`
	Patch      *v2Operation `json:"patch,omitempty"`
	Post       *v2Operation `json:"post,omitempty"`
	Put        *v2Operation `json:"put,omitempty"`
}

type v2Operation struct {
	Consumes    []string              `json:"consumes,omitempty"`
	Description string                `json:"description"`
	OperationID string                `json:"operationId"`
	Parameters  []v2Param             `json:"parameters,omitempty"`
	Produces    []string              `json:"produces,omitempty"`
	Responses   map[string]v2Response `json:"responses"`
	Schemes     []string              `json:"schemes"`
	Tags        []string              `json:"tags"`
	Action      string                `json:"x-kubernetes-action"`
	GVK         gvk                   `json:"x-kubernetes-group-version-kind"`
}

type v2Param struct {
	Description string  `json:"description,omitempty"`
	In          string  `json:"in"`
	Name        string  `json:"name"`
	Required    bool    `json:"required,omitempty"`
	Schema      *schema `json:"schema,omitempty"`
	Type        string  `json:"type,omitempty"`
	UniqueItems bool    `json:"uniqueItems,omitempty"`
}

type v2Response struct {
	Description string  `json:"description"`
	Schema      *schema `json:"schema,omitempty"`
}

func (m *model) v2Document() *v2Doc {
	doc := &v2Doc{Swagger: "2.0", Info: docInfo(), Paths: map[string]*v2PathItem{}, Definitions: m.defs,
		SecurityDefinitions: bearerToken, Security: bearerSecurity}
	for _, item := range m.paths {
		pi := &v2PathItem{}
		for _, p := range item.params {
			pi.Parameters = append(pi.Parameters, v2Parameter(p))
		}
		for _, op := range item.ops {
			o := m.v2Operation(op)
			switch op.method {
			case "get":
				pi.Get = o
			case "put":
				pi.Put = o
			case "post":
				pi.Post = o
			case "delete":
				pi.Delete = o
			case "patch":
				pi.Patch = o
			}
		}
		doc.Paths[item.path] = pi
	}
	return doc
}

func v2Parameter(p param) v2Param {
	return v2Param{Description: p.description, In: p.in, Name: p.name, Required: p.required, Type: p.typ, UniqueItems: true}
}

func (m *model) v2Operation(op operation) *v2Operation {
	o := &v2Operation{Consumes: op.consumes, Description: op.description, OperationID: op.id, Produces: op.produces,
		Responses: map[string]v2Response{}, Schemes: []string{"https"}, Tags: []string{op.tag}, Action: op.action, GVK: op.gvk}
	for _, p := range op.params {
		o.Parameters = append(o.Parameters, v2Parameter(p))
	}
	if op.bodyDef != "" {
		o.Parameters = append(o.Parameters, v2Param{In: "body", Name: "body", Required: op.bodyNeeded, Schema: m.d.ref(op.bodyDef)})
	}
	slices.SortFunc(o.Parameters, func(a, b v2Param) int { return strings.Compare(a.Name, b.Name) })
	for _, r := range op.responses {
		o.Responses[r.code] = v2Response{Description: r.description, Schema: m.responseSchema(r)}
	}
	return o
}

func (m *model) responseSchema(r response) *schema {
	switch {
	case r.def != "":
		return m.d.ref(r.def)
	case r.plain != nil:
		return r.plain
	}
	return nil
}

// OpenAPI 3.0 documents: one per group-version, and the discovery document
// that lists them.

type v3Discovery struct {
	Paths map[string]v3DiscoveryEntry `json:"paths"`
}

type v3DiscoveryEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

type v3Doc struct {
	OpenAPI    string                 `json:"openapi"`
	Info       info                   `json:"info"`
	Paths      map[string]*v3PathItem `json:"paths"`
	Components v3Components           `json:"components"`
	Security   []map[string][]string  `json:"security"`
}

type v3Components struct {
	Schemas         map[string]*schema        `json:"schemas"`
	SecuritySchemes map[string]securityScheme `json:"securitySchemes"`
}

type v3PathItem struct {
	Delete     *v3Operation `json:"delete,omitempty"`
	Get        *v3Operation `json:"get,omitempty"`
	Parameters []v3Param    `json:"parameters,omitempty"`
	Patch      *v3Operation `json:"patch,omitempty"`
	Post       *v3Operation `json:"post,omitempty"`
	Put        *v3Operation `json:"put,omitempty"`
}

type v3Operation struct {
	Description string                `json:"description"`
	OperationID string                `json:"operationId"`
	Parameters  []v3Param             `json:"parameters,omitempty"`
	RequestBody *v3RequestBody        `json:"requestBody,omitempty"`
	Responses   map[string]v3Response `json:"responses"`
	Tags        []string              `json:"tags"`
	Action      string                `json:"x-kubernetes-action"`
	GVK         gvk                   `json:"x-kubernetes-group-version-kind"`
}

type v3Param struct {
	Description string  `json:"description,omitempty"`
	In          string  `json:"in"`
	Name        string  `json:"name"`
	Required    bool    `json:"required,omitempty"`
	Schema      *schema `json:"schema"`
}

type v3MediaType struct {
	Schema *schema `json:"schema"`
}

type v3RequestBody struct {
	Content  map[string]v3MediaType `json:"content"`
	Required bool                   `json:"required,omitempty"`
}

type v3Response struct {
	Content     map[string]v3MediaType `json:"content,omitempty"`
	Description string                 `json:"description"`
}

func v3Parameter(p param) v3Param {
	return v3Param{Description: p.description, In: p.in, Name: p.name, Required: p.required,
		Schema: &schema{Type: p.typ, UniqueItems: true}}
}

// v3Document is the document of one group-version ("apis/apps/v1"): its
// paths and the definitions they reach.
func (m *model) v3Document(gv string) *v3Doc {
	doc := &v3Doc{OpenAPI: "3.0.0", Info: docInfo(), Paths: map[string]*v3PathItem{},
		Components: v3Components{Schemas: map[string]*schema{}, SecuritySchemes: bearerToken}, Security: bearerSecurity}
	var roots []string
	for _, item := range m.byGV[gv] {
		pi := &v3PathItem{}
		for _, p := range item.params {
			pi.Parameters = append(pi.Parameters, v3Parameter(p))
		}
		for _, op := range item.ops {
			o := &v3Operation{Description: op.description, OperationID: op.id, Responses: map[string]v3Response{},
				Tags: []string{op.tag}, Action: op.action, GVK: op.gvk}
			for _, p := range op.params {
				o.Parameters = append(o.Parameters, v3Parameter(p))
			}
			if op.bodyDef != "" {
				roots = append(roots, op.bodyDef)
				o.RequestBody = &v3RequestBody{Content: map[string]v3MediaType{}, Required: op.bodyNeeded}
				for _, ct := range op.consumes {
					o.RequestBody.Content[ct] = v3MediaType{Schema: m.d.ref(op.bodyDef)}
				}
			}
			for _, r := range op.responses {
				resp := v3Response{Description: r.description}
				if s := m.responseSchema(r); s != nil {
					if r.def != "" {
						roots = append(roots, r.def)
					}
					resp.Content = map[string]v3MediaType{}
					for _, ct := range op.produces {
						resp.Content[ct] = v3MediaType{Schema: s}
					}
				}
				o.Responses[r.code] = resp
			}
			switch op.method {
			case "get":
				pi.Get = o
			case "put":
				pi.Put = o
			case "post":
				pi.Post = o
			case "delete":
				pi.Delete = o
			case "patch":
				pi.Patch = o
			}
		}
		doc.Paths[item.path] = pi
	}
	// Every definition the paths reach, transitively.
	prefix := m.d.refPrefix()
	for len(roots) > 0 {
		name := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if _, done := doc.Components.Schemas[name]; done {
			continue
		}
		s := m.defs[name]
		doc.Components.Schemas[name] = s
		s.refs(prefix, func(n string) { roots = append(roots, n) })
	}
	return doc
}
