package containerd

import (
	"context"
	"fmt"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/minik8s/minik8s/kubelet/runtime"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var _ runtime.ResourceUpdater = (*Runtime)(nil)

// UpdateContainerResources changes the cgroup settings of the running
// container id, as containerd's CRI plugin does for kube's
// UpdateContainerResources: the task's cgroups first (runc update; on
// cgroup v2 runc turns the shares into cpu.weight), then the container's
// spec and its resources label, so that what it reports and a task created
// again from the spec match. Unset (zero) values are left as they are.
func (r *Runtime) UpdateContainerResources(ctx context.Context, id string, res runtime.Resources) error {
	ctx = r.nsctx(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return fmt.Errorf("update resources of %s: %w", id, err)
	}
	t, err := c.Task(ctx, nil)
	if err != nil {
		return fmt.Errorf("update resources of %s: container is not running: %w", id, err)
	}
	l, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	cur, _ := parseResources(l[LabelResources])
	next := mergeResources(cur, res)
	lr := linuxResources(next)
	if err := t.Update(ctx, containerd.WithResources(lr)); err != nil {
		return fmt.Errorf("update resources of %s: %w", id, err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return fmt.Errorf("record resources of %s: %w", id, err)
	}
	if err := c.Update(ctx, withSpecResources(spec, next)); err != nil {
		return fmt.Errorf("record resources of %s: %w", id, err)
	}
	if _, err := c.SetLabels(ctx, map[string]string{LabelResources: formatResources(next)}); err != nil {
		return fmt.Errorf("record resources of %s: %w", id, err)
	}
	return nil
}

// mergeResources is cur with the set values of next.
func mergeResources(cur, next runtime.Resources) runtime.Resources {
	if next.CPUShares > 0 {
		cur.CPUShares = next.CPUShares
	}
	if next.CPUQuota > 0 {
		cur.CPUQuota, cur.CPUPeriod = next.CPUQuota, next.CPUPeriod
	}
	if next.MemoryLimit > 0 {
		cur.MemoryLimit = next.MemoryLimit
	}
	return cur
}

// linuxResources are the OCI resources of res, only its set values.
func linuxResources(res runtime.Resources) *specs.LinuxResources {
	lr := &specs.LinuxResources{}
	if res.CPUShares > 0 || res.CPUQuota > 0 {
		lr.CPU = &specs.LinuxCPU{}
	}
	if res.CPUShares > 0 {
		shares := res.CPUShares
		lr.CPU.Shares = &shares
	}
	if res.CPUQuota > 0 {
		quota, period := res.CPUQuota, res.CPUPeriod
		lr.CPU.Quota, lr.CPU.Period = &quota, &period
	}
	if res.MemoryLimit > 0 {
		limit := res.MemoryLimit
		lr.Memory = &specs.LinuxMemory{Limit: &limit}
	}
	return lr
}

// withSpecResources stores spec with the resources res.
func withSpecResources(spec *oci.Spec, res runtime.Resources) containerd.UpdateContainerOpts {
	return func(ctx context.Context, client *containerd.Client, c *containers.Container) error {
		var opts []oci.SpecOpts
		if res.CPUShares > 0 {
			opts = append(opts, oci.WithCPUShares(res.CPUShares))
		}
		if res.CPUQuota > 0 {
			opts = append(opts, oci.WithCPUCFS(res.CPUQuota, res.CPUPeriod))
		}
		if res.MemoryLimit > 0 {
			opts = append(opts, oci.WithMemoryLimit(uint64(res.MemoryLimit)))
		}
		return containerd.WithSpec(spec, opts...)(ctx, client, c)
	}
}

// formatResources is the LabelResources value of res.
func formatResources(res runtime.Resources) string {
	return fmt.Sprintf("cpuShares=%d,cpuQuota=%d,cpuPeriod=%d,memoryLimit=%d", res.CPUShares, res.CPUQuota, res.CPUPeriod, res.MemoryLimit)
}

// parseResources reads a LabelResources value; false when there is none
// (a container created before the label existed).
func parseResources(s string) (runtime.Resources, bool) {
	var res runtime.Resources
	if s == "" {
		return res, false
	}
	if _, err := fmt.Sscanf(s, "cpuShares=%d,cpuQuota=%d,cpuPeriod=%d,memoryLimit=%d", &res.CPUShares, &res.CPUQuota, &res.CPUPeriod, &res.MemoryLimit); err != nil {
		return runtime.Resources{}, false
	}
	return res, true
}

// withCgroupMount mounts the container's cgroups at /sys/fs/cgroup,
// read-only unless privileged, as containerd's CRI plugin does (Docker's
// behaviour): programs read their limits there (cpu.max, memory.max;
// cpu/cpu.cfs_quota_us, memory/memory.limit_in_bytes on cgroup v1).
func withCgroupMount(privileged bool) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		o := []string{"nosuid", "noexec", "nodev", "relatime", "ro"}
		if privileged {
			o[4] = "rw"
		}
		kept := s.Mounts[:0]
		for _, m := range s.Mounts {
			if m.Destination != "/sys/fs/cgroup" {
				kept = append(kept, m)
			}
		}
		s.Mounts = append(kept, specs.Mount{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: o})
		return nil
	}
}
