package containerd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestUpdateContainerResources resizes a running container in place, as
// the conformance specs "Pod InPlace Resize Container ..." check it: the
// values the container reads in its own /sys/fs/cgroup (read-only, as
// containerd's CRI mounts it) follow, and the container reports the new
// settings.
func TestUpdateContainerResources(t *testing.T) {
	if _, err := os.Stat("/run/containerd/containerd.sock"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and containerd at /run/containerd/containerd.sock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	ns := fmt.Sprintf("minik8s-rt-%d", time.Now().UnixNano())
	rt, err := containerd.New(ctx, containerd.Config{Namespace: ns, StateDir: dir, CgroupParent: "/" + ns})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	defer func() {
		cs, _ := rt.ListPodContainers(context.Background(), "")
		for _, c := range cs {
			_ = rt.RemoveContainer(context.Background(), c.ID)
		}
		_ = testimage.DeleteNamespace(context.Background(), rt.Client(), ns)
		rt.RemovePodCgroups("r1")
		testimage.RemoveCgroupTree("/" + ns)
	}()
	if err := testimage.Import(namespaces.WithNamespace(ctx, ns), rt.Client(), testimage.Ref); err != nil {
		t.Fatal(err)
	}
	sb, err := rt.RunSandbox(ctx, runtime.SandboxConfig{PodUID: "r1", PodNamespace: "default", PodName: "p1", HostNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	orig := runtime.Resources{CPUShares: 20, CPUQuota: 3000, CPUPeriod: 100000, MemoryLimit: 45 << 20}
	id, err := rt.CreateContainer(ctx, runtime.ContainerConfig{PodUID: "r1", PodNamespace: "default", PodName: "p1", Name: "c1",
		Image: testimage.Ref, ImageRef: testimage.Ref, Command: []string{"sleep", "60"}, HostNetwork: true, SandboxID: sb.ID,
		LogPath: filepath.Join(dir, "logs", "0.log"), Resources: orig})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		t.Helper()
		var out strings.Builder
		code, err := rt.Exec(ctx, id, []string{"head", "-n", "1", path}, false, nil, &out, &out, nil)
		if err != nil || code != 0 {
			t.Fatalf("head %s: %d %v %q", path, code, err, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	var v2 bool
	{
		var out strings.Builder
		code, _ := rt.Exec(ctx, id, []string{"test", "-e", "/sys/fs/cgroup/cgroup.controllers"}, false, nil, &out, &out, nil)
		v2 = code == 0
	}
	// The cgroup files kube's e2e reads (test/e2e/common/node/framework/cgroups).
	check := func(r runtime.Resources, prevWeight int64) int64 {
		t.Helper()
		if v2 {
			if got, want := read("/sys/fs/cgroup/cpu.max"), fmt.Sprintf("%d %d", r.CPUQuota, r.CPUPeriod); got != want {
				t.Errorf("cpu.max = %q, want %q", got, want)
			}
			if got, want := read("/sys/fs/cgroup/memory.max"), strconv.FormatInt(r.MemoryLimit, 10); got != want {
				t.Errorf("memory.max = %q, want %q", got, want)
			}
			w, err := strconv.ParseInt(read("/sys/fs/cgroup/cpu.weight"), 10, 64)
			if err != nil || w <= prevWeight {
				t.Errorf("cpu.weight = %d (%v), want more than %d", w, err, prevWeight)
			}
			return w
		}
		if got, want := read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), strconv.FormatInt(r.CPUQuota, 10); got != want {
			t.Errorf("cpu.cfs_quota_us = %q, want %q", got, want)
		}
		if got, want := read("/sys/fs/cgroup/cpu/cpu.cfs_period_us"), strconv.FormatUint(r.CPUPeriod, 10); got != want {
			t.Errorf("cpu.cfs_period_us = %q, want %q", got, want)
		}
		if got, want := read("/sys/fs/cgroup/cpu/cpu.shares"), strconv.FormatUint(r.CPUShares, 10); got != want {
			t.Errorf("cpu.shares = %q, want %q", got, want)
		}
		if got, want := read("/sys/fs/cgroup/memory/memory.limit_in_bytes"), strconv.FormatInt(r.MemoryLimit, 10); got != want {
			t.Errorf("memory.limit_in_bytes = %q, want %q", got, want)
		}
		return 0
	}
	reported := func() *runtime.Resources {
		t.Helper()
		cs, err := rt.ListPodContainers(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.ID == id {
				return c.Resources
			}
		}
		t.Fatal("container not listed")
		return nil
	}
	w := check(orig, 0)
	if got := reported(); got == nil || *got != orig {
		t.Fatalf("reported resources %+v, want %+v", got, orig)
	}

	// Up: more shares, a higher quota and memory limit.
	up := runtime.Resources{CPUShares: 25, CPUQuota: 3500, CPUPeriod: 100000, MemoryLimit: 50 << 20}
	if err := rt.UpdateContainerResources(ctx, id, up); err != nil {
		t.Fatal(err)
	}
	check(up, w)
	if got := reported(); got == nil || *got != up {
		t.Fatalf("reported resources after the update %+v, want %+v", got, up)
	}
	// Only the memory limit, down: the CPU settings stay.
	down := up
	down.MemoryLimit = 40 << 20
	if err := rt.UpdateContainerResources(ctx, id, runtime.Resources{MemoryLimit: down.MemoryLimit}); err != nil {
		t.Fatal(err)
	}
	check(down, 0)
	if got := reported(); got == nil || *got != down {
		t.Fatalf("reported resources after the memory update %+v, want %+v", got, down)
	}
}
