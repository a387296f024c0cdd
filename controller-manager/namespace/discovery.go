package namespace

import (
	"context"
	"slices"

	"github.com/minik8s/minik8s/api"
)

// contentResources returns the namespaced resources a namespace deletion
// empties: the built-in ones, plus those the server's discovery lists
// besides them (custom resources, which CRDs add at run time) that can be
// listed and deleted as a collection, as kube's namespace controller
// finds them through discovery.
func (c *Controller) contentResources(ctx context.Context) ([]api.ResourceInfo, error) {
	out := slices.Clone(c.resources)
	builtin := map[string]bool{}
	for _, r := range c.resources {
		builtin[r.Group] = true
	}
	found, err := c.client.GroupResources(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range found {
		if builtin[r.Info.Group] || !r.Info.Namespaced ||
			!slices.Contains(r.Verbs, "deletecollection") || !slices.Contains(r.Verbs, "list") {
			continue
		}
		out = append(out, r.Info)
	}
	return out, nil
}
