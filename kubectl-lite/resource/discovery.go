package resource

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// Finder resolves one type argument ("deploy", "widgets.example.com") to
// the resource it names.
type Finder func(name string) (api.ResourceInfo, bool)

// Discovered returns a Finder that knows the kinds built into minik8s and,
// for any other name, what the server's discovery documents list (read
// once, on the first name the built-in table does not know), as kubectl's
// discovery REST mapper does: custom resources with their short names and
// subresources ("scale", "status").
func Discovered(ctx context.Context, c *client.Client) Finder {
	var (
		found []api.ResourceInfo
		err   error
		read  bool
	)
	return func(name string) (api.ResourceInfo, bool) {
		if info, ok := api.FindResource(name); ok {
			return info, true
		}
		if !read {
			found, err = Discover(ctx, c)
			read = true
		}
		if err != nil {
			return api.ResourceInfo{}, false
		}
		return findIn(found, name)
	}
}

// discoveryList is the part of an APIResourceList read here.
type discoveryList struct {
	Resources []struct {
		Name         string   `json:"name"`
		SingularName string   `json:"singularName"`
		Namespaced   bool     `json:"namespaced"`
		Kind         string   `json:"kind"`
		ShortNames   []string `json:"shortNames"`
	} `json:"resources"`
}

// Discover reads the resources the server lists at the preferred version
// of each group under /apis (core's /api/v1 first), with the subresources
// listed beside them.
func Discover(ctx context.Context, c *client.Client) ([]api.ResourceInfo, error) {
	b, err := c.Do(ctx, client.Request{Path: "/apis"})
	if err != nil {
		return nil, err
	}
	var groups struct {
		Groups []struct {
			PreferredVersion struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return nil, fmt.Errorf("decode /apis: %w", err)
	}
	gvs := []string{"v1"}
	for _, g := range groups.Groups {
		gvs = append(gvs, g.PreferredVersion.GroupVersion)
	}
	var out []api.ResourceInfo
	for _, gv := range gvs {
		path := "/apis/" + gv
		if gv == "v1" {
			path = "/api/v1"
		}
		b, err := c.Do(ctx, client.Request{Path: path})
		if err != nil {
			return nil, err
		}
		var l discoveryList
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		group, version, ok := strings.Cut(gv, "/")
		if !ok {
			group, version = "", gv
		}
		index := map[string]int{}
		for _, r := range l.Resources {
			if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
				if i, ok := index[parent]; ok {
					out[i].Subresources = append(out[i].Subresources, sub)
				}
				continue
			}
			singular := r.SingularName
			if singular == "" {
				singular = strings.ToLower(r.Kind)
			}
			index[r.Name] = len(out)
			out = append(out, api.ResourceInfo{Group: group, Version: version, Kind: r.Kind, Resource: r.Name,
				Singular: singular, ShortNames: r.ShortNames, Namespaced: r.Namespaced})
		}
	}
	return out, nil
}

// findIn matches name as api.FindResource does: the plural, the singular,
// the kind or a short name, optionally followed by ".GROUP".
func findIn(infos []api.ResourceInfo, name string) (api.ResourceInfo, bool) {
	n, group := splitGroup(name)
	for _, r := range infos {
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
