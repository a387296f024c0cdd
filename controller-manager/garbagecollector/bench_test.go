package garbagecollector_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// BenchmarkBackgroundCascade deletes 100 owners with 10 pods each against a
// real apiserver and measures the time until the collector removed all
// 1,000 dependents (reported as dependents/s).
func BenchmarkBackgroundCascade(b *testing.B) {
	const owners, perOwner = 100, 10
	cl := controllermanagertest.Start(b, []string{"garbagecollector"}, nil)
	ctx := cl.Context(10 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	rsClient := client.Resource[api.ReplicaSet](c).Namespace(ns)
	podClient := client.Resource[api.Pod](c).Namespace(ns)
	var total time.Duration
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		controllermanagertest.Parallel(b, owners, func(i int) error {
			rs, err := rsClient.Create(ctx, &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("b%d-%d", iter, i)},
				Spec: api.ReplicaSetSpec{Replicas: ptr(int32(perOwner)), Selector: &api.LabelSelector{MatchLabels: labels}, Template: template()}})
			if err != nil {
				return err
			}
			ref := controller.NewControllerRef(&rs.ObjectMeta, "apps/v1", "ReplicaSet")
			for j := range perOwner {
				p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("%s-%d", rs.Name, j), Labels: labels, OwnerReferences: []api.OwnerReference{ref}}, Spec: template().Spec}
				if _, err := podClient.Create(ctx, p); err != nil {
					return err
				}
			}
			return nil
		})
		b.StartTimer()
		start := time.Now()
		controllermanagertest.Parallel(b, owners, func(i int) error { return rsClient.Delete(ctx, fmt.Sprintf("b%d-%d", iter, i), nil) })
		for {
			l, err := podClient.List(ctx, client.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if len(l.Items) == 0 {
				break
			}
			if ctx.Err() != nil {
				b.Fatalf("%d dependents left", len(l.Items))
			}
			time.Sleep(20 * time.Millisecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(owners*perOwner*b.N)/total.Seconds(), "dependents/s")
}
