package pods

import (
	"context"

	"github.com/minik8s/minik8s/kubelet/network"
)

// Network attaches pods to the node's pod network; kubelet/network
// implements it with CNI.
type Network interface {
	// Ready is nil once the network is configured (the node has a podCIDR).
	Ready() error
	// Configure sets the network up for the node's podCIDR.
	Configure(podCIDR string) error
	// SetUp attaches a sandbox and returns the pod's IP.
	SetUp(ctx context.Context, p network.Pod) (string, error)
	// TearDown detaches a sandbox; it works when the sandbox is gone.
	TearDown(ctx context.Context, p network.Pod) error
}
