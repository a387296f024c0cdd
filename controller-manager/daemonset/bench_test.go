package daemonset_test

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

// BenchmarkDaemonSetRollout: the time until every one of
// MINIK8S_BENCH_NODES (default 1000) simulated nodes runs an available pod
// of a DaemonSet's new template, rolling with maxUnavailable
// MINIK8S_BENCH_MAX_UNAVAILABLE (default 10%), against a real apiserver and
// the simulated kubelet.
func BenchmarkDaemonSetRollout(b *testing.B) {
	nodes := 1000
	if v, err := strconv.Atoi(os.Getenv("MINIK8S_BENCH_NODES")); err == nil && v > 0 {
		nodes = v
	}
	maxUnavailable := api.FromString("10%")
	if v := os.Getenv("MINIK8S_BENCH_MAX_UNAVAILABLE"); v != "" {
		maxUnavailable = api.FromString(v)
		if n, err := strconv.Atoi(v); err == nil {
			maxUnavailable = api.FromInt(int32(n))
		}
	}
	e := start(b)
	controllermanagertest.Parallel(b, nodes, func(i int) error {
		name := fmt.Sprintf("node-%d", i)
		_, err := client.Resource[api.Node](e.Client).Create(context.Background(), &api.Node{ObjectMeta: api.ObjectMeta{Name: name,
			Labels: map[string]string{api.LabelHostname: name}}})
		return err
	})
	lbl := map[string]string{"app": "agent"}
	ds := &api.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: e.ns, Name: "agent"},
		Spec: api.DaemonSetSpec{Selector: &api.LabelSelector{MatchLabels: lbl},
			UpdateStrategy: api.DaemonSetUpdateStrategy{Type: "RollingUpdate", RollingUpdate: &api.RollingUpdateDaemonSet{MaxUnavailable: &maxUnavailable}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "a", Image: "agent:0"}}}}}}
	if _, err := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns).Create(context.Background(), ds); err != nil {
		b.Fatal(err)
	}
	rolledOut := func(what string) {
		e.Eventually(20*time.Minute, what, func() (bool, error) {
			ds := e.ds()
			st := ds.Status
			n := int32(nodes)
			return st.ObservedGeneration == ds.Generation && st.DesiredNumberScheduled == n && st.UpdatedNumberScheduled == n &&
				st.NumberAvailable == n, fmt.Errorf("status %+v", st)
		})
	}
	rolledOut("the first revision on every node")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.updateDS(func(ds *api.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("agent:%d", i+1) })
		rolledOut(fmt.Sprintf("agent:%d on every node", i+1))
	}
	b.ReportMetric(float64(nodes)*float64(b.N)/b.Elapsed().Seconds(), "nodes/s")
}
