package pods

import (
	"context"
	"time"

	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	startDuration     prometheus.Histogram
	runningPods       prometheus.Gauge
	runningContainers *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		startDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "pod_start_duration_seconds",
			Help:    "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run",
			Buckets: []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600},
		}),
		runningPods: prometheus.NewGauge(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_pods", Help: "Number of pods that have a running pod sandbox",
		}),
		runningContainers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "kubelet", Name: "running_containers", Help: "Number of containers currently running",
		}, []string{"container_state"}),
	}
	if reg != nil {
		reg.MustRegister(m.startDuration, m.runningPods, m.runningContainers)
	}
	return m
}

func (m *metrics) observeStart(d time.Duration) { m.startDuration.Observe(d.Seconds()) }

// updateGauges recounts running pods and containers from the runtime.
func (m *Manager) updateGauges(ctx context.Context) {
	cs, err := m.rt.ListPodContainers(ctx, "")
	if err != nil {
		return
	}
	pods := map[string]bool{}
	counts := map[runtime.State]int{}
	for _, c := range cs {
		if c.Kind == runtime.KindSandbox {
			if c.State == runtime.StateRunning {
				pods[c.PodUID] = true
			}
			continue
		}
		counts[c.State]++
	}
	m.metrics.runningPods.Set(float64(len(pods)))
	for _, s := range []runtime.State{runtime.StateCreated, runtime.StateRunning, runtime.StateExited, runtime.StateUnknown} {
		m.metrics.runningContainers.WithLabelValues(string(s)).Set(float64(counts[s]))
	}
}
