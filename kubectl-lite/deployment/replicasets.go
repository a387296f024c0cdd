package deployment

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
)

// ReplicaSets lists the ReplicaSets d controls: those its selector
// matches whose controller owner reference is d.
func ReplicaSets(ctx context.Context, c *client.Client, d *api.Deployment) ([]api.ReplicaSet, error) {
	sel, err := labels.SelectorFromLabelSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %q has an invalid selector: %w", d.Name, err)
	}
	l, err := client.Resource[api.ReplicaSet](c).Namespace(d.Namespace).List(ctx, client.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	var out []api.ReplicaSet
	for _, rs := range l.Items {
		if api.IsControlledBy(&rs.ObjectMeta, d.UID) {
			out = append(out, rs)
		}
	}
	return out, nil
}
