package app

import (
	"context"

	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/stats"
)

// RuntimeContainers adapts the runtime driver to the stats provider's
// lister: the running containers and sandboxes.
type RuntimeContainers struct{ Runtime runtime.Runtime }

var _ stats.ContainerLister = RuntimeContainers{}

// RunningContainers implements stats.ContainerLister.
func (rc RuntimeContainers) RunningContainers(ctx context.Context) ([]stats.Container, error) {
	cs, err := rc.Runtime.ListPodContainers(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]stats.Container, 0, len(cs))
	for _, c := range cs {
		if c.State != runtime.StateRunning {
			continue
		}
		out = append(out, stats.Container{ID: c.ID, PodUID: c.PodUID, PodNamespace: c.PodNamespace, PodName: c.PodName,
			Name: c.Name, Sandbox: c.Kind == runtime.KindSandbox, StartedAt: c.StartedAt})
	}
	return out, nil
}
