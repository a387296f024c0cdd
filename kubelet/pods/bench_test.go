package pods_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// benchPods is how many pods (or containers) every row starts at once.
const benchPods = 50

// benchRound numbers the pods of each round, across rows and runs.
var benchRound atomic.Int32

// BenchmarkPodStartup starts benchPods at once on one node (image present)
// in three rows at the same concurrency, and reports for each the time
// until all are running, pods/s and the p50/p99 of one pod's
// creation→Running:
//
//   - kubelet/pod-network: pods through the apiserver and the kubelet, each
//     with its own network namespace on the node's CNI bridge;
//   - kubelet/host-network: the same pods with hostNetwork, so no pod
//     networking (like with like for the next row);
//   - containerd/no-network: benchPods containers created and started from
//     as many goroutines with the containerd client (a new snapshot each,
//     no network namespace): the floor under the kubelet.
//
// pod-network ÷ host-network is what pod networking costs; host-network ÷
// containerd what the kubelet and the apiserver add. Needs root and
// containerd.
func BenchmarkPodStartup(b *testing.B) {
	// The node network as the kubelet sets it up: one node masquerade rule
	// rather than the bridge plugin's per-pod rules.
	// Registered first so it runs last, after the node's own clean-up
	// (which configures the network again to tear pods down).
	b.Cleanup(func() {
		if err := network.RemoveMasquerade(); err != nil {
			b.Log(err)
		}
	})
	nd := newNode(b, func(nd *node) { nd.netConfig.ClusterCIDR = "10.244.0.0/16" })
	// Warm up, untimed, what only the first pod of a kind pays (the CNI
	// bridge, the image's first snapshot), so no row pays it for the others.
	startPods(b, nd, int(benchRound.Add(1)), false, 1)
	startPods(b, nd, int(benchRound.Add(1)), true, 1)
	report := func(b *testing.B, lat []time.Duration, total time.Duration) {
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
		b.ReportMetric(p(0.50).Seconds(), "p50-s")
		b.ReportMetric(p(0.99).Seconds(), "p99-s")
		b.ReportMetric(float64(benchPods)/total.Seconds(), "pods/s")
		b.ReportMetric(total.Seconds(), "all-running-s")
		b.Logf("%d at once: all running in %s (p50 %s, p99 %s)", benchPods, total.Round(time.Millisecond), p(0.5).Round(time.Millisecond), p(0.99).Round(time.Millisecond))
	}
	for _, hostNetwork := range []bool{false, true} {
		name := "kubelet/pod-network"
		if hostNetwork {
			name = "kubelet/host-network"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				lat, total := startPods(b, nd, int(benchRound.Add(1)), hostNetwork, benchPods)
				report(b, lat, total)
			}
		})
	}
	b.Run("containerd/no-network", func(b *testing.B) {
		for range b.N {
			lat, total := bareContainerd(b, nd)
			report(b, lat, total)
		}
	})
}

// startPods creates count pods at once and waits until the kubelet reports
// every one Running; it returns each pod's creation→Running and the time
// until the last, then deletes the pods and waits until the node is clean.
func startPods(b *testing.B, nd *node, round int, hostNetwork bool, count int) ([]time.Duration, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, err := nd.pods().Watch(ctx, client.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	created := make([]time.Time, count)
	names := map[string]int{}
	for i := range count {
		names[fmt.Sprintf("bench-%d-%d", round, i)] = i
	}
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for name, i := range names {
		wg.Go(func() {
			p := nd.pod(name, api.Container{Name: "main", Command: sh("sleep 3600")})
			p.Spec.HostNetwork = hostNetwork
			mu.Lock()
			created[i] = time.Now()
			mu.Unlock()
			if _, err := nd.pods().Create(ctx, p); err != nil {
				b.Error(err)
			}
		})
	}
	lat := make([]time.Duration, 0, count)
	seen := map[string]bool{}
	for len(lat) < count {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				b.Fatal("watch closed")
			}
			p := ev.Object
			i, mine := names[p.Name]
			if !mine || seen[p.Name] || !running(p) {
				continue
			}
			seen[p.Name] = true
			mu.Lock()
			lat = append(lat, time.Since(created[i]))
			mu.Unlock()
		case <-ctx.Done():
			b.Fatalf("only %d pods Running", len(lat))
		}
	}
	total := time.Since(start)
	wg.Wait()
	b.StopTimer()
	// Clean up for the next round, outside the timed part.
	zero := int64(0)
	for name := range names {
		_ = nd.pods().Delete(ctx, name, &api.DeleteOptions{GracePeriodSeconds: &zero})
	}
	waitGone(b, nd, names)
	b.StartTimer()
	return lat, total
}

// waitGone waits until none of the named pods exists in the API and the
// node's containerd namespace holds no container, so the next round does
// not share the node with this one's teardown.
func waitGone(b *testing.B, nd *node, names map[string]int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cc, err := containerd.New(socket, containerd.WithDefaultNamespace(nd.ns))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	for {
		l, err := nd.pods().List(ctx, client.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		left := 0
		for _, p := range l.Items {
			if _, mine := names[p.Name]; mine {
				left++
			}
		}
		var containers []any
		if nd.criEndpoint != "" {
			cs, err := nd.runtime().ListPodContainers(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range cs {
				containers = append(containers, c)
			}
		} else {
			cs, err := cc.Containers(namespaces.WithNamespace(ctx, nd.ns))
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range cs {
				containers = append(containers, c)
			}
		}
		if left == 0 && len(containers) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			b.Fatalf("%d bench pods and %d containers still exist", left, len(containers))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// bareContainerd is the floor: benchPods containers created and started at
// once with the containerd client, each with a new snapshot and no network
// namespace. It returns each one's create→started and the time until the
// last.
func bareContainerd(b *testing.B, nd *node) ([]time.Duration, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := containerd.New(socket, containerd.WithDefaultNamespace(nd.ns))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx = namespaces.WithNamespace(ctx, nd.ns)
	img, err := c.GetImage(ctx, testimage.Ref)
	if err != nil {
		b.Fatal(err)
	}
	type made struct {
		c containerd.Container
		t containerd.Task
	}
	all := make([]made, benchPods)
	lat := make([]time.Duration, benchPods)
	errs := make([]error, benchPods)
	round := benchRound.Add(1)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range benchPods {
		wg.Go(func() {
			t0 := time.Now()
			id := fmt.Sprintf("bare-%d-%d-%d", time.Now().UnixNano(), round, i)
			ct, err := c.NewContainer(ctx, id, containerd.WithImage(img), containerd.WithNewSnapshot(id, img),
				containerd.WithNewSpec(oci.WithImageConfig(img), oci.WithProcessArgs("sleep", "3600"),
					oci.WithCgroup(filepath.Join("/"+nd.ns, "bare", id))))
			if err != nil {
				errs[i] = err
				return
			}
			all[i].c = ct
			t, err := ct.NewTask(ctx, cio.NullIO)
			if err != nil {
				errs[i] = err
				return
			}
			all[i].t = t
			errs[i] = t.Start(ctx)
			lat[i] = time.Since(t0)
		})
	}
	wg.Wait()
	total := time.Since(start)
	b.StopTimer()
	for _, m := range all {
		if m.t != nil {
			_, _ = m.t.Delete(ctx, containerd.WithProcessKill)
		}
		if m.c != nil {
			_ = m.c.Delete(ctx, containerd.WithSnapshotCleanup)
		}
	}
	b.StartTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return lat, total
}
