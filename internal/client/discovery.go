package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// DiscoveredResource is a resource the server's discovery documents list:
// enough of a ResourceInfo to reach it (objects decode as
// api.CustomObject), and its verbs.
type DiscoveredResource struct {
	Info  api.ResourceInfo
	Verbs []string
}

// GroupResources lists the resources, not subresources, of the preferred
// version of every API group but the core one (/apis, then
// /apis/GROUP/VERSION), as kube's discovery client does for its
// controllers. A server without /apis lists none.
func (c *Client) GroupResources(ctx context.Context) ([]DiscoveredResource, error) {
	var groups struct {
		Groups []struct {
			Name             string `json:"name"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	data, err := c.Do(ctx, Request{Path: "/apis"})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var out []DiscoveredResource
	for _, g := range groups.Groups {
		var list struct {
			Resources []struct {
				Name         string   `json:"name"`
				SingularName string   `json:"singularName"`
				Namespaced   bool     `json:"namespaced"`
				Kind         string   `json:"kind"`
				Verbs        []string `json:"verbs"`
			} `json:"resources"`
		}
		v := g.PreferredVersion.Version
		data, err := c.Do(ctx, Request{Path: "/apis/" + g.Name + "/" + v})
		if apierrors.IsNotFound(err) {
			continue // gone since /apis was read
		}
		if err != nil {
			return nil, fmt.Errorf("discovery of %s/%s: %w", g.Name, v, err)
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("discovery of %s/%s: %w", g.Name, v, err)
		}
		for _, r := range list.Resources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			out = append(out, DiscoveredResource{Verbs: r.Verbs, Info: api.ResourceInfo{Group: g.Name, Version: v, Kind: r.Kind,
				Resource: r.Name, Singular: r.SingularName, Namespaced: r.Namespaced, New: func() api.Object { return &api.CustomObject{} }}})
		}
	}
	return out, nil
}
