package resource

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// Finder resolves one type argument ("deploy", "widgets.example.com") to
// the resource it names.
type Finder func(name string) (api.ResourceInfo, bool)

// Mapper is kubectl's deferred discovery REST mapper for one command run:
// the kinds built into minik8s first, then what the server's discovery
// documents list — custom resources, aggregated APIs — read on the first
// name the built-in table does not know, and read again once on a later
// miss (kubectl resets its mapper on a NoMatch error), never for a built-in
// name.
type Mapper struct {
	ctx context.Context
	c   *client.Client

	found []discovered
	err   error
	reads int
}

// discovered is one resource of a discovery document.
type discovered struct {
	info api.ResourceInfo
	// preferred: of the group's preferred version, which names resolve to.
	preferred  bool
	categories []string
}

// NewMapper returns a Mapper reading discovery through c.
func NewMapper(ctx context.Context, c *client.Client) *Mapper {
	return &Mapper{ctx: ctx, c: c}
}

// Discovered returns the Find of a new Mapper.
func Discovered(ctx context.Context, c *client.Client) Finder {
	return NewMapper(ctx, c).Find
}

// Find resolves a type argument: a plural, singular, kind or short name,
// optionally followed by ".GROUP".
func (m *Mapper) Find(name string) (api.ResourceInfo, bool) {
	if info, ok := api.FindResource(name); ok {
		return info, true
	}
	return m.lookup(func(d []discovered) (api.ResourceInfo, bool) { return findIn(d, name) })
}

// FindKind resolves the apiVersion and kind of a manifest.
func (m *Mapper) FindKind(apiVersion, kind string) (api.ResourceInfo, bool) {
	if info, ok := api.LookupKind(apiVersion, kind); ok {
		return info, true
	}
	return m.lookup(func(ds []discovered) (api.ResourceInfo, bool) {
		for _, d := range ds {
			if d.info.GroupVersion() == apiVersion && d.info.Kind == kind {
				return d.info, true
			}
		}
		return api.ResourceInfo{}, false
	})
}

// Category lists the resources of a category ("all") in discovery order,
// the built-in ones with their built-in entries; ok is false when
// discovery could not be read.
func (m *Mapper) Category(name string) ([]api.ResourceInfo, bool) {
	if m.reads == 0 {
		m.read()
	}
	if m.err != nil {
		return nil, false
	}
	var out []api.ResourceInfo
	for _, d := range m.found {
		if !d.preferred || !slices.Contains(d.categories, name) {
			continue
		}
		info := d.info
		if b, ok := api.LookupKind(info.GroupVersion(), info.Kind); ok {
			info = b
		}
		out = append(out, info)
	}
	return out, true
}

// lookup runs find on the discovered resources, reading discovery the
// first time and again once after a miss.
func (m *Mapper) lookup(find func([]discovered) (api.ResourceInfo, bool)) (api.ResourceInfo, bool) {
	if m.reads == 0 {
		m.read()
	}
	if info, ok := find(m.found); ok && m.err == nil {
		return info, true
	}
	if m.reads > 1 {
		return api.ResourceInfo{}, false
	}
	m.read()
	if m.err != nil {
		return api.ResourceInfo{}, false
	}
	return find(m.found)
}

func (m *Mapper) read() {
	m.reads++
	m.found, m.err = discover(m.ctx, m.c)
}

// discoveryList is the part of an APIResourceList read here.
type discoveryList struct {
	Resources []struct {
		Name         string   `json:"name"`
		SingularName string   `json:"singularName"`
		Namespaced   bool     `json:"namespaced"`
		Kind         string   `json:"kind"`
		ShortNames   []string `json:"shortNames"`
		Categories   []string `json:"categories"`
	} `json:"resources"`
}

// discover reads every version of every group. A group/version whose
// document cannot be read (an aggregated API whose server is down) is left
// out, as kubectl goes on with partial discovery.
func discover(ctx context.Context, c *client.Client) ([]discovered, error) {
	b, err := c.Do(ctx, client.Request{Path: "/apis"})
	if err != nil {
		return nil, err
	}
	var groups struct {
		Groups []struct {
			Versions []struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"versions"`
			PreferredVersion struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return nil, fmt.Errorf("decode /apis: %w", err)
	}
	type gv struct {
		name      string
		preferred bool
	}
	gvs := []gv{{"v1", true}}
	for _, g := range groups.Groups {
		gvs = append(gvs, gv{g.PreferredVersion.GroupVersion, true})
		for _, v := range g.Versions {
			if v.GroupVersion != g.PreferredVersion.GroupVersion {
				gvs = append(gvs, gv{v.GroupVersion, false})
			}
		}
	}
	var out []discovered
	for _, v := range gvs {
		path := "/apis/" + v.name
		if v.name == "v1" {
			path = "/api/v1"
		}
		b, err := c.Do(ctx, client.Request{Path: path})
		if err != nil {
			if v.name == "v1" {
				return nil, err
			}
			continue
		}
		var l discoveryList
		if err := json.Unmarshal(b, &l); err != nil {
			continue
		}
		group, version, ok := strings.Cut(v.name, "/")
		if !ok {
			group, version = "", v.name
		}
		index := map[string]int{}
		for _, r := range l.Resources {
			if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
				if i, ok := index[parent]; ok {
					out[i].info.Subresources = append(out[i].info.Subresources, sub)
				}
				continue
			}
			singular := r.SingularName
			if singular == "" {
				singular = strings.ToLower(r.Kind)
			}
			index[r.Name] = len(out)
			out = append(out, discovered{
				info: api.ResourceInfo{Group: group, Version: version, Kind: r.Kind, Resource: r.Name,
					Singular: singular, ShortNames: r.ShortNames, Namespaced: r.Namespaced},
				preferred:  v.preferred,
				categories: r.Categories,
			})
		}
	}
	return out, nil
}

// findIn matches name as api.FindResource does, among the preferred
// versions: the plural, the singular, the kind or a short name, optionally
// followed by ".GROUP".
func findIn(ds []discovered, name string) (api.ResourceInfo, bool) {
	n, group := splitGroup(name)
	for _, d := range ds {
		r := d.info
		if !d.preferred || group != "" && r.Group != group {
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
	return api.ResourceInfo{}, false
}

// splitGroup is kubectl's schema.ParseGroupResource of a lower-cased
// type argument: "widgets.example.com" is widgets of group example.com.
func splitGroup(name string) (resource, group string) {
	resource, group, _ = strings.Cut(strings.ToLower(name), ".")
	return resource, group
}

// unknownType is kubectl's error for a type no resource has.
func unknownType(name string) error {
	resource, group, _ := strings.Cut(name, ".")
	if group != "" {
		return fmt.Errorf("the server doesn't have a resource type %q in group %q", resource, group)
	}
	return fmt.Errorf("the server doesn't have a resource type %q", resource)
}
