package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// benchServices is the number of Services × 10 endpoints loaded before
// measuring (PROXY_BENCH_SERVICES, default 1000).
func benchServices() int {
	if n, err := strconv.Atoi(os.Getenv("PROXY_BENCH_SERVICES")); err == nil && n >= 0 {
		return n
	}
	return 1000
}

// BenchmarkEndpointChangeToRules measures, with N Services of 10 endpoints
// each loaded and the proxier at the production minimum sync period
// (DefaultMinSyncPeriod, the kubelet's --iptables-min-sync-period
// default), the time from an EndpointSlice write to traffic following it
// (an endpoint added: first success; removed: first refusal), and reports
// the time one full and one partial rule rewrite take. Two rows, named with
// the period: "isolated" writes each change at least the period after the
// last rewrite (a lone change, as most are), "back-to-back" writes the
// next change as soon as traffic followed the last (a stream of changes,
// which the period holds back).
func BenchmarkEndpointChangeToRules(b *testing.B) {
	n := newTestNetB(b, 1)
	n.serve(0, 8080)
	s := apiservertest.Start(b)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svcs := client.Resource[api.Service](c).Namespace("default")
	slices := client.Resource[api.EndpointSlice](c).Namespace("default")

	// Load N Services × 10 endpoints with 16 concurrent writers.
	total := benchServices()
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < total; i += 16 {
				name := fmt.Sprintf("svc-%d", i)
				if _, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: name},
					Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt(8080)}}}}); err != nil {
					errc <- err
					return
				}
				var eps []api.Endpoint
				for e := range 10 {
					eps = append(eps, readyEndpoint(fmt.Sprintf("10.244.%d.%d", 100+i/25, (i%25)*10+e+1)))
				}
				if _, err := slices.Create(ctx, &api.EndpointSlice{
					ObjectMeta:  api.ObjectMeta{Name: name + "-x", Labels: map[string]string{api.LabelServiceName: name}},
					AddressType: api.AddressTypeIPv4, Endpoints: eps,
					Ports: []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
				}); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		b.Fatal(err)
	}
	probe, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "probe"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt(8080)}}}})
	if err != nil {
		b.Fatal(err)
	}
	slice, err := slices.Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "probe-x", Labels: map[string]string{api.LabelServiceName: "probe"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
	})
	if err != nil {
		b.Fatal(err)
	}

	runner := IPTables{Netns: n.node}
	minSync := DefaultMinSyncPeriod
	p, err := New(Config{Client: c, ClusterCIDR: "10.244.0.0/16", Runner: runner, MinSyncPeriod: minSync, Logger: benchLogger()})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		_ = Cleanup(runner)
	}()
	url := fmt.Sprintf("http://%s:80/", probe.Spec.ClusterIP)
	waitFor := func(wantOK bool) time.Duration {
		start := time.Now()
		for time.Since(start) < 60*time.Second {
			_, err := n.get(url)
			if wantOK && err == nil || !wantOK && errors.Is(err, syscall.ECONNREFUSED) {
				return time.Since(start)
			}
			time.Sleep(2 * time.Millisecond)
		}
		b.Fatalf("rules never followed the change (want ok=%v)", wantOK)
		return 0
	}
	waitFor(false) // first full sync done

	// One full rewrite with everything loaded.
	syncStart := time.Now()
	if err := p.FullSync(); err != nil {
		b.Fatal(err)
	}
	fullSync := time.Since(syncStart)
	syncStart = time.Now()
	if err := p.Sync(); err != nil {
		b.Fatal(err)
	}
	partialSync := time.Since(syncStart)

	for _, row := range []struct {
		name    string
		isolate bool
	}{{"isolated", true}, {"back-to-back", false}} {
		b.Run(fmt.Sprintf("min-sync=%v/%s", minSync, row.name), func(b *testing.B) {
			var sum time.Duration
			b.ResetTimer()
			for range b.N {
				// Toggle from the slice's state: a sub-benchmark runs more
				// than once (b.N = 1 first) on the same slice.
				add := len(slice.Endpoints) == 0
				if add {
					slice.Endpoints = []api.Endpoint{readyEndpoint(n.podIP(0))}
				} else {
					slice.Endpoints = nil
				}
				if row.isolate {
					b.StopTimer()
					time.Sleep(minSync)
					b.StartTimer()
				}
				start := time.Now()
				if slice, err = slices.Update(ctx, slice); err != nil {
					b.Fatal(err)
				}
				benchLogger().Debug("updated slice", "add", add, "write", time.Since(start))
				waitFor(add)
				benchLogger().Debug("traffic followed", "add", add, "after", time.Since(start))
				sum += time.Since(start)
			}
			b.StopTimer()
			b.ReportMetric(float64(sum.Milliseconds())/float64(b.N), "ms/change")
			// A parent benchmark's own metrics are not printed: each row
			// carries the rewrite times measured above.
			b.ReportMetric(float64(fullSync.Milliseconds()), "ms/full-sync")
			b.ReportMetric(float64(partialSync.Milliseconds()), "ms/partial-sync")
			b.ReportMetric(float64(total), "services")
		})
	}
}

// BenchmarkClusterIPVsPodIP compares new-connection HTTP requests through
// a ClusterIP with the same requests to the pod IP directly.
func BenchmarkClusterIPVsPodIP(b *testing.B) {
	n := newTestNetB(b, 1)
	n.serve(0, 8080)
	runner := IPTables{Netns: n.node}
	sp := []*servicePort{{Namespace: "default", Name: "web", Protocol: api.ProtocolTCP, ClusterIP: "10.96.7.7", Port: 80,
		Endpoints: []string{n.podIP(0) + ":8080"}}}
	rs := render(sp, "10.244.0.0/16")
	if err := runner.Restore(append(rs.natRestore(nil, nil), filterRestore(rs.filter)...)); err != nil {
		b.Fatal(err)
	}
	for _, j := range jumps {
		if err := runner.EnsureRule(j.table, j.chain, j.args...); err != nil {
			b.Fatal(err)
		}
	}
	defer Cleanup(runner)
	measure := func(url string) float64 {
		hc := n.client()
		const reqs = 300
		start := time.Now()
		for range reqs {
			resp, err := hc.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		return reqs / time.Since(start).Seconds()
	}
	var viaSvc, direct float64
	for i := 0; i < b.N; i++ {
		direct += measure("http://" + n.podIP(0) + ":8080/")
		viaSvc += measure("http://10.96.7.7:80/")
	}
	b.ReportMetric(direct/float64(b.N), "direct-req/s")
	b.ReportMetric(viaSvc/float64(b.N), "clusterip-req/s")
	b.ReportMetric(viaSvc/direct, "ratio")
}

// benchLogger logs the proxier's syncs when PROXY_BENCH_DEBUG is set.
func benchLogger() *slog.Logger {
	if os.Getenv("PROXY_BENCH_DEBUG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// syncBenchServices is the number of Services × 5 endpoints of
// BenchmarkSyncProxyRules (PROXY_SYNC_BENCH_SERVICES, default 10,000).
func syncBenchServices() int {
	if n, err := strconv.Atoi(os.Getenv("PROXY_SYNC_BENCH_SERVICES")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// syncBenchObjects makes n ClusterIP Services of one port, each with an
// EndpointSlice of 5 ready endpoints.
func syncBenchObjects(n int) ([]*api.Service, []*api.EndpointSlice) {
	addr := func(base uint32, i int) string {
		v := base + uint32(i)
		return fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&0xff, v>>8&0xff, v&0xff)
	}
	svcs := make([]*api.Service, n)
	slices := make([]*api.EndpointSlice, n)
	for i := range n {
		name := fmt.Sprintf("svc-%d", i)
		svcs[i] = &api.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name},
			Spec: api.ServiceSpec{Type: api.ServiceTypeClusterIP, ClusterIP: addr(10<<24|96<<16, i+1),
				Ports: []api.ServicePort{{Name: "http", Port: 80, Protocol: api.ProtocolTCP, TargetPort: api.FromInt(8080)}}}}
		var eps []api.Endpoint
		for e := range 5 {
			eps = append(eps, readyEndpoint(addr(10<<24|128<<16, i*5+e)))
		}
		slices[i] = &api.EndpointSlice{
			ObjectMeta:  api.ObjectMeta{Namespace: "default", Name: name + "-x", Labels: map[string]string{api.LabelServiceName: name}},
			AddressType: api.AddressTypeIPv4, Endpoints: eps,
			Ports: []api.EndpointSlicePort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
		}
	}
	return svcs, slices
}

// BenchmarkSyncProxyRules times what kube-proxy's
// sync_proxy_rules_duration_seconds measures, for each proxy mode, with
// 10,000 Services × 5 endpoints applied to the kernel in a fresh network
// namespace: a full sync (everything rewritten: iptables-restore of every
// chain; the nf_tables table deleted and rebuilt in one transaction), and
// the sync after one endpoint of one Service changed (the changed chains;
// the changed chains and map elements). Each iteration does one of each.
func BenchmarkSyncProxyRules(b *testing.B) {
	total := syncBenchServices()
	svcs, slices := syncBenchObjects(total)
	c, err := client.New(&client.Config{Host: "http://127.0.0.1:1", QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range Modes {
		b.Run(mode, func(b *testing.B) {
			n := newTestNetB(b, 0)
			runner := IPTables{Netns: n.node}
			p, err := New(Config{Client: c, ClusterCIDR: "10.244.0.0/16", Runner: runner, Mode: mode, Logger: benchLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = Cleanup(runner) }()
			// The first sync also removes the other mode's rules: not timed.
			if err := p.syncFrom(svcs, slices); err != nil {
				b.Fatal(err)
			}
			changed := slices[total/2]
			orig := changed.Endpoints[0].Addresses[0]
			var full, partial time.Duration
			b.ResetTimer()
			for i := range b.N {
				p.mu.Lock()
				p.written, p.nftWritten = nil, nil
				p.mu.Unlock()
				start := time.Now()
				if err := p.syncFrom(svcs, slices); err != nil {
					b.Fatal(err)
				}
				full += time.Since(start)
				if i%2 == 0 {
					changed.Endpoints[0].Addresses = []string{"10.250.0.1"}
				} else {
					changed.Endpoints[0].Addresses = []string{orig}
				}
				start = time.Now()
				if err := p.syncFrom(svcs, slices); err != nil {
					b.Fatal(err)
				}
				partial += time.Since(start)
			}
			b.StopTimer()
			b.ReportMetric(float64(full.Milliseconds())/float64(b.N), "ms/full-sync")
			b.ReportMetric(float64(partial.Milliseconds())/float64(b.N), "ms/endpoint-sync")
			b.ReportMetric(float64(total), "services")
		})
	}
}

// BenchmarkRenderNFT is the Go side of an nftables sync of 10,000
// Services × 5 endpoints: the model, the table and the chain bodies a
// partial sync compares.
func BenchmarkRenderNFT(b *testing.B) {
	svcs, slices := syncBenchObjects(syncBenchServices())
	for b.Loop() {
		rs := renderNFT(buildServicePorts(svcs, slices, ""), "10.244.0.0/16")
		for _, c := range rs.chains {
			_ = c.body()
		}
	}
}
