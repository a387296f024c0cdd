package pods_test

import (
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/kubelet/network"
)

// BenchmarkPodStartupDrivers starts benchPods at once, as
// BenchmarkPodStartup's kubelet rows do, on each runtime driver side by
// side: the native containerd driver (the kubelet runs CNI, pause-less
// sandboxes) and the CRI driver on containerd's CRI plugin (the plugin
// runs the pause container and CNI). Rows DRIVER/pod-network and
// DRIVER/host-network report all-running-s, pods/s and the p50/p99 of one
// pod's creation→Running.
func BenchmarkPodStartupDrivers(b *testing.B) {
	b.Cleanup(func() {
		if err := network.RemoveMasquerade(); err != nil {
			b.Log(err)
		}
	})
	for _, d := range drivers {
		nd := newNode(b, d.mutate, func(nd *node) { nd.netConfig.ClusterCIDR = "10.244.0.0/16" })
		// Warm up, untimed: the bridge, the image's first snapshot.
		startPods(b, nd, int(benchRound.Add(1)), false, 1)
		startPods(b, nd, int(benchRound.Add(1)), true, 1)
		for _, hostNetwork := range []bool{false, true} {
			name := d.name + "/pod-network"
			if hostNetwork {
				name = d.name + "/host-network"
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					lat, total := startPods(b, nd, int(benchRound.Add(1)), hostNetwork, benchPods)
					slices.Sort(lat)
					p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
					b.ReportMetric(p(0.50).Seconds(), "p50-s")
					b.ReportMetric(p(0.99).Seconds(), "p99-s")
					b.ReportMetric(float64(benchPods)/total.Seconds(), "pods/s")
					b.ReportMetric(total.Seconds(), "all-running-s")
				}
			})
		}
	}
}
