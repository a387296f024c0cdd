package statefulset_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// BenchmarkStatefulSetScaleUp: the time for a StatefulSet to go from 0 to
// MINIK8S_BENCH_REPLICAS (default 100) Ready pods with OrderedReady (one
// pod at a time, each after its predecessor is Ready) and with Parallel,
// against a real apiserver and the simulated kubelet (4 fake nodes, pods
// Ready as soon as bound).
func BenchmarkStatefulSetScaleUp(b *testing.B) {
	n := int32(100)
	if v, err := strconv.Atoi(os.Getenv("MINIK8S_BENCH_REPLICAS")); err == nil && v > 0 {
		n = int32(v)
	}
	for _, policy := range []api.PodManagementPolicyType{api.OrderedReadyPodManagement, api.ParallelPodManagement} {
		b.Run(string(policy), func(b *testing.B) {
			cl := controllermanagertest.Start(b, []string{"statefulset"}, nil)
			controllermanagertest.RunKubelet(b, cl.Client, controllermanagertest.KubeletOptions{Nodes: 4})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ns := fmt.Sprintf("bench-%d", i)
				cl.Namespace(ns)
				s := webSet(ns, n)
				s.Spec.VolumeClaimTemplates = nil
				s.Spec.Template.Spec.Containers[0].VolumeMounts = nil
				s.Spec.PodManagementPolicy = policy
				sc := client.Resource[api.StatefulSet](cl.Client).Namespace(ns)
				if _, err := sc.Create(context.Background(), s); err != nil {
					b.Fatal(err)
				}
				cl.Eventually(10*time.Minute, fmt.Sprintf("%d ready replicas", n), func() (bool, error) {
					got, err := sc.Get(context.Background(), "web")
					if err != nil {
						return false, err
					}
					return got.Status.ReadyReplicas == n, fmt.Errorf("status %+v", got.Status)
				})
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
