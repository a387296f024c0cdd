package nodeipam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Controller assigns podCIDRs to nodes.
type Controller struct {
	client *client.Client
	nodes  *informer.Informer[api.Node]
	*controller.Loop[string]
	recorder events.Recorder
	log      *slog.Logger

	mu   sync.Mutex
	set  *CIDRSet
	held map[string]string // node name -> the block this controller counts as the node's
}

var _ controller.Interface = (*Controller)(nil)

// New is the "nodeipam" constructor. With --allocate-node-cidrs=false the
// controller runs but does nothing, as kube's is not started then.
func New(ctx *controller.Context) (controller.Interface, error) {
	if !ctx.Options.AllocateNodeCIDRs {
		return idle{ctx.Logger}, nil
	}
	set, err := NewCIDRSet(ctx.Options.ClusterCIDR, ctx.Options.NodeCIDRMaskSize)
	if err != nil {
		return nil, err
	}
	c := NewController(ctx.Client, informer.Shared[api.Node](ctx.Factory, "", client.ListOptions{}),
		set, ctx.Events.RecorderFor("node-controller"), ctx.Logger)
	return controller.WithSyncMetrics(c, ctx.Metrics, "nodeipam")
}

type idle struct{ log *slog.Logger }

func (i idle) Run(ctx context.Context, _ int) error {
	i.log.Info("--allocate-node-cidrs is false: not assigning podCIDRs")
	<-ctx.Done()
	return nil
}

// NewController wires a controller over a node informer and a CIDR set.
func NewController(c *client.Client, nodes *informer.Informer[api.Node], set *CIDRSet, rec events.Recorder, log *slog.Logger) *Controller {
	ctl := &Controller{
		client:   c,
		nodes:    nodes,
		recorder: rec,
		log:      log,
		set:      set,
		held:     map[string]string{},
	}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "nodeipam", Sync: ctl.sync, Log: log})
	controller.Watch(ctl.Loop, nodes, informer.Handler[api.Node]{
		OnAdd: func(n *api.Node, _ bool) { ctl.Add(n.Name) },
		OnUpdate: func(old, n *api.Node) {
			if old.Spec.PodCIDR != n.Spec.PodCIDR || n.Spec.PodCIDR == "" {
				ctl.Add(n.Name)
			}
		},
		OnDelete: func(n *api.Node, _ bool) { ctl.Add(n.Name) },
	})
	return ctl
}

// Run waits for the node cache, takes every block nodes already hold, and
// then assigns blocks to the others.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if !c.WaitForCaches(ctx) {
		return nil
	}
	c.occupyExisting()
	c.log.Info("assigning node podCIDRs", "blocks", c.set.Size(), "used", c.set.Used())
	c.RunWorkers(ctx, workers)
	return nil
}

// occupyExisting rebuilds the allocation map from the nodes' podCIDRs.
func (c *Controller) occupyExisting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes.Lister().List(labels.Everything()) {
		if n.Spec.PodCIDR == "" {
			continue
		}
		if err := c.set.Occupy(n.Spec.PodCIDR); err != nil {
			c.log.Warn("node podCIDR outside the cluster CIDR", "node", n.Name, "podCIDR", n.Spec.PodCIDR, "err", err)
			continue
		}
		c.held[n.Name] = n.Spec.PodCIDR
	}
}

// sync makes the node's podCIDR and the allocation map agree.
func (c *Controller) sync(ctx context.Context, name string) error {
	node := controller.Cached(c.nodes, name)
	if node == nil {
		if c.release(name) {
			// A block is free again: nodes waiting for one try now rather
			// than at their back-off.
			for _, n := range c.nodes.Lister().List(labels.Everything()) {
				if n.Spec.PodCIDR == "" {
					c.Add(n.Name)
				}
			}
		}
		return nil
	}
	if node.Spec.PodCIDR != "" {
		c.adopt(node)
		return nil
	}
	cidr, err := c.reserve(name)
	if errors.Is(err, ErrCIDRRangeFull) {
		c.recorder.Eventf(node, api.EventTypeWarning, "CIDRNotAvailable", "Node %s status is now: %s", name, "CIDRNotAvailable")
		return fmt.Errorf("node %s: %w", name, err)
	}
	if err != nil {
		return err
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": cidr, "podCIDRs": []string{cidr}}})
	_, err = client.Resource[api.Node](c.client).Patch(ctx, name, client.MergePatchType, patch)
	switch {
	case apierrors.IsNotFound(err):
		c.release(name)
		return nil
	case err != nil:
		// Keep the reservation: the retry patches the same block.
		return fmt.Errorf("set podCIDR %s on node %s: %w", cidr, name, err)
	}
	c.log.Info("assigned podCIDR", "node", name, "podCIDR", cidr)
	return nil
}

// adopt records the block a node already has.
func (c *Controller) adopt(node *api.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[node.Name] == node.Spec.PodCIDR {
		return
	}
	if old, ok := c.held[node.Name]; ok {
		_ = c.set.Release(old)
		delete(c.held, node.Name)
	}
	if err := c.set.Occupy(node.Spec.PodCIDR); err != nil {
		c.log.Warn("node podCIDR outside the cluster CIDR", "node", node.Name, "podCIDR", node.Spec.PodCIDR, "err", err)
		return
	}
	c.held[node.Name] = node.Spec.PodCIDR
}

// reserve returns the block held for name, allocating one if none is.
func (c *Controller) reserve(name string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cidr, ok := c.held[name]; ok {
		return cidr, nil
	}
	cidr, err := c.set.AllocateNext()
	if err != nil {
		return "", err
	}
	c.held[name] = cidr
	return cidr, nil
}

// release frees the block held for name; false if it held none.
func (c *Controller) release(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cidr, ok := c.held[name]
	if !ok {
		return false
	}
	_ = c.set.Release(cidr)
	delete(c.held, name)
	c.log.Info("released podCIDR", "node", name, "podCIDR", cidr)
	return true
}
