package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/apiserver/etcd"
)

// TestKubernetesEndpointsLeases runs two apiservers on one etcd with the
// lease endpoint reconciler (renewal every 300 ms, leases of 3 s): the
// kubernetes Endpoints and EndpointSlice list both advertise addresses,
// sorted; a lease left by an apiserver that died (written here, never
// renewed) adds its address until it ends (revoked here, as its expiry);
// an apiserver that stops removes its lease and its address at once.
func TestKubernetesEndpointsLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ext, start := apiserversOnOneEtcd(ctx, t, func(o *app.Options) {
		o.EndpointReconcilerInterval = 300 * time.Millisecond
		o.EndpointReconcilerTTL = 3 * time.Second
	})
	a := start("10.0.0.2")
	b := start("10.0.0.1")
	waitFor := kubernetesEndpointsWaiter(ctx, t, a)
	waitFor([]string{"10.0.0.1", "10.0.0.2"}, 10*time.Second)

	// An apiserver that died: its lease is not renewed. The lease here is
	// long (so a stalled machine cannot miss the address while it is
	// listed) and its end is brought about by revoking it, as its expiry
	// would.
	c := ext.Client()
	lease, err := c.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "/registry/masterleases/10.0.0.9", `{"kind":"Endpoints","apiVersion":"v1","metadata":{},"subsets":[{"addresses":[{"ip":"10.0.0.9"}]}]}`,
		clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	waitFor([]string{"10.0.0.1", "10.0.0.2", "10.0.0.9"}, 20*time.Second)
	if _, err := c.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	took := waitFor([]string{"10.0.0.1", "10.0.0.2"}, 20*time.Second)
	t.Logf("the dead apiserver's address left %v after its lease ended", took)

	// A stopped apiserver takes its lease and address away.
	b.Shutdown()
	took = waitFor([]string{"10.0.0.2"}, 10*time.Second)
	t.Logf("the stopped apiserver's address left %v after its shutdown", took)
	resp, err := c.Get(ctx, "/registry/masterleases/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != "/registry/masterleases/10.0.0.2" {
		t.Fatalf("leases after the shutdown: %v %v", resp, err)
	}
}

// kubernetesEndpointsWaiter returns waitFor(want, within): it waits until
// the kubernetes Endpoints, read through s, list the addresses want (in
// that order) and the EndpointSlice the same, ready, and returns how
// long that took; it fails the test after within.
func kubernetesEndpointsWaiter(ctx context.Context, t *testing.T, a *apiservertest.Server) func(want []string, within time.Duration) time.Duration {
	// addresses is what the Endpoints and the EndpointSlice say, "" for
	// the slice when the two differ.
	addresses := func() ([]string, string) {
		o, err := a.Store("", "endpoints").Get(ctx, "default", "kubernetes")
		if err != nil {
			return nil, err.Error()
		}
		e := o.(*api.Endpoints)
		var ips []string
		for _, s := range e.Subsets {
			for _, ad := range s.Addresses {
				ips = append(ips, ad.IP)
			}
		}
		if e.Labels["endpointslice.kubernetes.io/skip-mirror"] != "true" {
			return ips, "no skip-mirror label"
		}
		so, err := a.Store("discovery.k8s.io", "endpointslices").Get(ctx, "default", "kubernetes")
		if err != nil {
			return ips, err.Error()
		}
		var sips []string
		for _, ep := range so.(*api.EndpointSlice).Endpoints {
			if ep.Conditions.Ready == nil || !*ep.Conditions.Ready {
				return ips, "slice endpoint not ready"
			}
			sips = append(sips, ep.Addresses...)
		}
		if !slices.Equal(ips, sips) {
			return ips, "slice lists " + strings.Join(sips, ",")
		}
		return ips, ""
	}
	waitFor := func(want []string, within time.Duration) time.Duration {
		t.Helper()
		begin := time.Now()
		var got []string
		var why string
		for time.Since(begin) < within {
			if got, why = addresses(); why == "" && slices.Equal(got, want) {
				return time.Since(begin)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("kubernetes endpoints: %v (%s) after %v, want %v", got, why, within, want)
		return 0
	}
	return waitFor
}

// TestKubernetesEndpointsMasterCount: with the deprecated master-count
// reconciler and --apiserver-count=2, two apiservers are both listed, and
// one that stops removes its address.
func TestKubernetesEndpointsMasterCount(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, start := apiserversOnOneEtcd(ctx, t, func(o *app.Options) {
		o.EndpointReconcilerType, o.APIServerCount = app.MasterCountEndpointReconciler, 2
		o.EndpointReconcilerInterval = 300 * time.Millisecond
	})
	a := start("10.0.0.2")
	b := start("10.0.0.1")
	waitFor := kubernetesEndpointsWaiter(ctx, t, a)
	waitFor([]string{"10.0.0.1", "10.0.0.2"}, 10*time.Second)
	b.Shutdown()
	waitFor([]string{"10.0.0.2"}, 10*time.Second)
}

// apiserversOnOneEtcd starts an etcd of the test's own and returns it with
// a function that starts an apiserver on it advertising ip, with opts.
func apiserversOnOneEtcd(ctx context.Context, t *testing.T, opts func(*app.Options)) (*etcd.Backend, func(ip string) *apiservertest.Server) {
	t.Helper()
	ext, err := etcd.Start(ctx, etcd.Config{DataDir: t.TempDir(), Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(func() { _ = ext.Close() })
	return ext, func(ip string) *apiservertest.Server {
		return apiservertest.Start(t, func(o *app.Options) {
			o.EtcdServers, o.DataDir = ext.Endpoints(), ""
			o.AdvertiseAddress = ip
			opts(o)
		})
	}
}
