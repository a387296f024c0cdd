package persistentvolume_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// BenchmarkBind200 measures the time from 200 claims created to all of
// them Bound to 200 Available volumes of matching sizes (a real apiserver
// on embedded etcd; the persistentvolume-binder with its one worker). It
// reports claims bound per second.
func BenchmarkBind200(b *testing.B) {
	const n = 200
	cl := controllermanagertest.Start(b, []string{"persistentvolume-binder"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	volumes := client.Resource[api.PersistentVolume](cl.Client)
	claims := client.Resource[api.PersistentVolumeClaim](cl.Client)
	empty := ""
	var total time.Duration
	for round := 0; round < b.N; round++ {
		b.StopTimer()
		ns := fmt.Sprintf("bench-%d", round)
		cl.Namespace(ns)
		for i := range n {
			if _, err := volumes.Create(ctx, &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("%s-pv-%03d", ns, i)},
				Spec: api.PersistentVolumeSpec{Capacity: api.ResourceList{api.ResourceStorage: quantity(fmt.Sprintf("%dMi", 100+i))},
					AccessModes:            []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
					PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: "/srv"}}}}); err != nil {
				b.Fatal(err)
			}
		}
		cl.Eventually(time.Minute, "volumes Available", func() (bool, error) {
			list, err := volumes.List(ctx, client.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, v := range list.Items {
				if v.Status.Phase != api.VolumeAvailable {
					return false, nil
				}
			}
			return true, nil
		})
		b.StartTimer()
		start := time.Now()
		for i := range n {
			if _, err := claims.Namespace(ns).Create(ctx, &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("c-%03d", i), Namespace: ns},
				Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce}, StorageClassName: &empty,
					Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: quantity(fmt.Sprintf("%dMi", 100+i))}}}}); err != nil {
				b.Fatal(err)
			}
		}
		cl.Eventually(5*time.Minute, "claims Bound", func() (bool, error) {
			list, err := claims.Namespace(ns).List(ctx, client.ListOptions{})
			if err != nil {
				return false, err
			}
			bound := 0
			for _, c := range list.Items {
				if c.Status.Phase == api.ClaimBound {
					bound++
				}
			}
			return bound == n, fmt.Errorf("%d bound", bound)
		})
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "claims/s")
}
