package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// contentResources returns the namespaced resources a namespace deletion
// empties: the built-in ones, plus those the server's discovery lists
// besides them (custom resources, which CRDs add at run time) that can be
// listed and deleted as a collection, as kube's namespace controller
// finds them through discovery.
func (c *Controller) contentResources(ctx context.Context) ([]api.ResourceInfo, error) {
	out := slices.Clone(c.resources)
	known := map[string]bool{}
	for _, r := range c.resources {
		known[r.Group+"/"+r.Resource] = true
	}
	var groups struct {
		Groups []struct {
			Name             string `json:"name"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	data, err := c.client.Do(ctx, client.Request{Path: "/apis"})
	if apierrors.IsNotFound(err) {
		return out, nil // a server without group discovery serves only built-in kinds
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	for _, g := range groups.Groups {
		if builtinGroup(c.resources, g.Name) {
			continue
		}
		var list struct {
			Resources []struct {
				Name       string   `json:"name"`
				Namespaced bool     `json:"namespaced"`
				Kind       string   `json:"kind"`
				Verbs      []string `json:"verbs"`
			} `json:"resources"`
		}
		data, err := c.client.Do(ctx, client.Request{Path: "/apis/" + g.Name + "/" + g.PreferredVersion.Version})
		if err != nil {
			return nil, fmt.Errorf("discovery of %s: %w", g.Name, err)
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("discovery of %s: %w", g.Name, err)
		}
		for _, r := range list.Resources {
			if !r.Namespaced || strings.Contains(r.Name, "/") || known[g.Name+"/"+r.Name] ||
				!slices.Contains(r.Verbs, "deletecollection") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			out = append(out, api.ResourceInfo{Group: g.Name, Version: g.PreferredVersion.Version, Kind: r.Kind,
				Resource: r.Name, Namespaced: true, New: func() api.Object { return &api.CustomObject{} }})
		}
	}
	return out, nil
}

// builtinGroup reports whether a group's resources are all built in.
func builtinGroup(resources []api.ResourceInfo, group string) bool {
	for _, r := range resources {
		if r.Group == group {
			return true
		}
	}
	return false
}
