package pods_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
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

const benchPods = 50

// BenchmarkPodStartup creates 50 pods at once on one node (image present)
// and reports creation→Running p50/p99 and pods/s, beside 50 bare
// containerd create+start calls in a row from this process.
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
	for i := 0; i < b.N; i++ {
		bare := bareContainerd(b, nd)
		lat, total := startPods(b, nd, i)
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
		b.ReportMetric(p(0.50).Seconds(), "p50-s")
		b.ReportMetric(p(0.99).Seconds(), "p99-s")
		b.ReportMetric(float64(benchPods)/total.Seconds(), "pods/s")
		b.ReportMetric(bare.Seconds(), "bare-containerd-50-s")
		b.ReportMetric(total.Seconds(), "kubelet-50-s")
		b.ReportMetric(total.Seconds()/bare.Seconds(), "ratio")
		b.Logf("kubelet: 50 pods Running in %s (p50 %s, p99 %s); bare containerd 50 create+start: %s", total, p(0.5), p(0.99), bare)
	}
}

func startPods(b *testing.B, nd *node, round int) ([]time.Duration, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, err := nd.pods().Watch(ctx, client.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	created := make([]time.Time, benchPods)
	names := map[string]int{}
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for i := range benchPods {
		name := fmt.Sprintf("bench-%d-%d", round, i)
		mu.Lock()
		names[name] = i
		mu.Unlock()
		wg.Go(func() {
			p := nd.pod(name, api.Container{Name: "main", Command: sh("sleep 3600")})
			mu.Lock()
			created[i] = time.Now()
			mu.Unlock()
			if _, err := nd.pods().Create(ctx, p); err != nil {
				b.Error(err)
			}
		})
	}
	lat := make([]time.Duration, 0, benchPods)
	seen := map[string]bool{}
	for len(lat) < benchPods {
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
	// Clean up for the next round.
	zero := int64(0)
	for name := range names {
		_ = nd.pods().Delete(ctx, name, &api.DeleteOptions{GracePeriodSeconds: &zero})
	}
	return lat, total
}

// bareContainerd is the floor: 50 containers created and started one after
// another with the containerd client, each with a new snapshot.
func bareContainerd(b *testing.B, nd *node) time.Duration {
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
	var all []made
	start := time.Now()
	for i := range benchPods {
		id := fmt.Sprintf("bare-%d-%d", time.Now().UnixNano(), i)
		ct, err := c.NewContainer(ctx, id, containerd.WithImage(img), containerd.WithNewSnapshot(id, img),
			containerd.WithNewSpec(oci.WithImageConfig(img), oci.WithProcessArgs("sleep", "3600"),
				oci.WithCgroup(filepath.Join("/"+nd.ns, "bare", id))))
		if err != nil {
			b.Fatal(err)
		}
		t, err := ct.NewTask(ctx, cio.NullIO)
		if err != nil {
			b.Fatal(err)
		}
		if err := t.Start(ctx); err != nil {
			b.Fatal(err)
		}
		all = append(all, made{ct, t})
	}
	el := time.Since(start)
	for _, m := range all {
		_, _ = m.t.Delete(ctx, containerd.WithProcessKill)
		_ = m.c.Delete(ctx, containerd.WithSnapshotCleanup)
	}
	return el
}
