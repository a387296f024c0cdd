package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// forEachMode runs a traffic test under each proxy mode.
func forEachMode(t *testing.T, f func(t *testing.T, mode string)) {
	for _, mode := range Modes {
		t.Run(mode, func(t *testing.T) { f(t, mode) })
	}
}

// nftTables reads the node namespace's table "kube-proxy" back from the
// kernel: its chains, then each set's elements with the addresses of
// their keys ("service-ips: 10.96.0.10 ..."); "" when there is no table.
func (n *testNet) nftTables() string {
	n.t.Helper()
	cc, closeFn, err := NFTables{Netns: n.node}.conn()
	if err != nil {
		n.t.Fatal(err)
	}
	defer closeFn()
	tables, err := cc.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		n.t.Fatal(err)
	}
	var t *nftables.Table
	for _, tb := range tables {
		if tb.Name == nftTable {
			t = tb
		}
	}
	if t == nil {
		return ""
	}
	var b strings.Builder
	chains, err := cc.ListChainsOfTableFamily(nftables.TableFamilyIPv4)
	if err != nil {
		n.t.Fatal(err)
	}
	var names []string
	for _, c := range chains {
		if c.Table.Name == nftTable {
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	for _, c := range names {
		b.WriteString("chain " + c + "\n")
	}
	sets, err := cc.GetSets(t)
	if err != nil {
		n.t.Fatal(err)
	}
	for _, s := range sets {
		if s.Anonymous {
			continue
		}
		es, err := cc.GetSetElements(s)
		if err != nil {
			n.t.Fatal(err)
		}
		var keys []string
		for _, e := range es {
			k := fmt.Sprintf("%x", e.Key)
			ipFirst := s.Name != nftServiceNodePortsMap && s.Name != nftNoEndpointNodePorts
			if ipFirst && len(e.Key) >= 4 {
				k = net.IP(e.Key[:4]).String()
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "set %s: %s\n", s.Name, strings.Join(keys, " "))
	}
	return b.String()
}

// checkNFTServiceRemoved deletes default/web and waits for its chains and
// its ClusterIP to leave the table "kube-proxy".
func checkNFTServiceRemoved(t *testing.T, n *testNet, deleteService func() error, clusterIP string) {
	t.Helper()
	before := n.nftTables()
	if !strings.Contains(before, "default/web/tcp/http") || !strings.Contains(before, clusterIP+" ") && !strings.Contains(before, clusterIP+"\n") {
		t.Fatalf("no chains or elements of default/web in:\n%s", before)
	}
	if err := deleteService(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "rules removed", func() error {
		now := n.nftTables()
		if strings.Contains(now, "default/web/") {
			return fmt.Errorf("chains of default/web remain:\n%s", now)
		}
		for _, l := range strings.Split(now, "\n") {
			if strings.HasPrefix(l, "set ") && strings.Contains(l+" ", " "+clusterIP+" ") {
				return fmt.Errorf("%s remains:\n%s", clusterIP, now)
			}
		}
		return nil
	})
}

// TestProxyModeSwitch: starting in one mode removes the other mode's rules
// (as kube-proxy does at start), traffic keeps flowing across the
// switches, and each mode records kube-proxy's sync duration metric.
func TestProxyModeSwitch(t *testing.T) {
	n := newTestNet(t, 1)
	n.serve(0, 8080)
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	svc, err := client.Resource[api.Service](c).Namespace("default").Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt(8080)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.EndpointSlice](c).Namespace("default").Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "web-abcde", Labels: map[string]string{api.LabelServiceName: "web"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints:   []api.Endpoint{readyEndpoint(n.podIP(0))},
	}); err != nil {
		t.Fatal(err)
	}
	runner := IPTables{Netns: n.node}
	t.Cleanup(func() { _ = Cleanup(runner) })
	url := fmt.Sprintf("http://%s:80/", svc.Spec.ClusterIP)
	iptablesChains := func() bool {
		save, err := runner.Save("nat")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(save), ":KUBE-SERVICES")
	}
	for _, mode := range []string{ModeIPTables, ModeNFTables, ModeIPTables} {
		reg := prometheus.NewRegistry()
		p, err := New(Config{Client: c, ClusterCIDR: "10.244.0.0/16", Runner: runner, MinSyncPeriod: 20 * time.Millisecond, Mode: mode, Metrics: reg})
		if err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- p.Run(pctx) }()
		eventually(t, 10*time.Second, mode+": synced", func() error {
			if !p.Synced() {
				return errors.New("not yet")
			}
			return nil
		})
		eventually(t, 10*time.Second, mode+": served", func() error {
			body, err := n.get(url)
			if err == nil && body != "pod-0" {
				err = fmt.Errorf("answered %q", body)
			}
			return err
		})
		nft := n.nftTables() != ""
		if mode == ModeNFTables && (iptablesChains() || !nft) {
			t.Errorf("nftables mode: iptables chains %v (want none), table kube-proxy %v (want it)", iptablesChains(), nft)
		}
		if mode == ModeIPTables && (!iptablesChains() || nft) {
			t.Errorf("iptables mode: iptables chains %v (want them), table kube-proxy %v (want none)", iptablesChains(), nft)
		}
		if got := testutil.CollectAndCount(reg, "kubeproxy_sync_proxy_rules_duration_seconds"); got != 1 {
			t.Errorf("%s: kubeproxy_sync_proxy_rules_duration_seconds: %d series", mode, got)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "kubeproxy_sync_proxy_rules_duration_seconds" && mf.Metric[0].GetHistogram().GetSampleCount() == 0 {
				t.Errorf("%s: no sync recorded in kubeproxy_sync_proxy_rules_duration_seconds", mode)
			}
		}
		pcancel()
		<-done
	}
	if err := Cleanup(runner); err != nil {
		t.Fatal(err)
	}
	if iptablesChains() || n.nftTables() != "" {
		t.Errorf("Cleanup left rules: iptables %v, nftables:\n%s", iptablesChains(), n.nftTables())
	}
}

// TestNFTLargeBatches writes a table whose maps hold more elements than
// fit one netlink attribute (its length is 16 bits): 2,000 Services, one
// of them with 3,000 endpoints; then a partial sync. Sent in one message,
// such a list wrapped around and the kernel answered ENOENT for elements
// it misread.
func TestNFTLargeBatches(t *testing.T) {
	n := newTestNet(t, 0)
	svcs, slices := syncBenchObjects(2000)
	var eps []api.Endpoint
	for i := range 3000 {
		eps = append(eps, readyEndpoint(fmt.Sprintf("10.200.%d.%d", i/250, i%250+1)))
	}
	slices[0].Endpoints = eps
	w := newNFTWriter(NFTables{Netns: n.node})
	rs := renderNFT(buildServicePorts(svcs, slices, ""), "10.244.0.0/16")
	state, err := w.write(rs, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices[0].Endpoints = eps[:2999]
	slices[1].Endpoints = nil
	rs = renderNFT(buildServicePorts(svcs, slices, ""), "10.244.0.0/16")
	if _, err := w.write(rs, state); err != nil {
		t.Fatal(err)
	}
	table := n.nftTables()
	for _, l := range strings.Split(table, "\n") {
		if name, elems, ok := strings.Cut(l, ": "); ok && name == "set "+nftServiceIPsMap {
			if got := len(strings.Fields(elems)); got != 1999 {
				t.Errorf("service-ips has %d elements, want 1999", got)
			}
		}
	}
	if !strings.Contains(table, "set "+nftNoEndpointServices+": 10.96.0.2\n") {
		t.Errorf("svc-1 without endpoints is not in %s:\n%.300s", nftNoEndpointServices, table[strings.Index(table, "set "+nftNoEndpointServices):])
	}
	if err := CleanupNFTables(NFTables{Netns: n.node}); err != nil {
		t.Fatal(err)
	}
}
