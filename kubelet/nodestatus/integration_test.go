package nodestatus_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
)

func newClient(t *testing.T, s *apiservertest.Server) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// poll calls f until it returns nil or the deadline passes.
func poll(t *testing.T, ctx context.Context, what string, f func() error) {
	t.Helper()
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func start(t *testing.T, ctx context.Context, cfg nodestatus.Config) *nodestatus.Manager {
	t.Helper()
	m, err := nodestatus.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

func TestRegisterStatusAndLease(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var healthy atomic.Bool
	healthy.Store(true)
	rec := &events.FakeRecorder{}
	taints, _ := nodestatus.ParseTaints("dedicated=infra:NoSchedule")
	m := start(t, ctx, nodestatus.Config{
		Client: c, NodeName: "node-1", NodeIP: net.ParseIP("127.0.0.1"),
		Labels: map[string]string{"tier": "edge"}, Taints: taints, MaxPods: 50,
		SystemReserved: api.ResourceList{api.ResourceCPU: mustQ("100m")},
		// The disk read is the test machine's, which may be over 90% full
		// (a CI machine was): disk signals off, as on the compose nodes.
		// TestSetStatusConditions checks the thresholds on fixed readings.
		EvictionHard: nodestatus.Thresholds{MemoryAvailable: 100 << 20},
		RootDir:      t.TempDir(), KubeletPort: 10250,
		RuntimeVersion: func() (string, error) { return "containerd://1.6.20", nil },
		RuntimeHealthy: func() error {
			if healthy.Load() {
				return nil
			}
			return errors.New("containerd is not serving")
		},
		Recorder:           rec,
		Logger:             apiservertest.Logger(),
		LeaseDuration:      40 * time.Second,
		LeaseRenewInterval: 200 * time.Millisecond,
		// Check often; report only when something changed.
		StatusUpdateFrequency: 100 * time.Millisecond,
		StatusReportFrequency: time.Hour,
	})
	nodes := client.Resource[api.Node](c)
	n, err := m.WaitForNode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err = nodes.Get(ctx, n.Name)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux",
		"kubernetes.io/arch": n.Status.NodeInfo.Architecture, "beta.kubernetes.io/arch": n.Status.NodeInfo.Architecture, "tier": "edge"} {
		if n.Labels[k] != v || v == "" {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints = %v", n.Spec.Taints)
	}
	if q := n.Status.Capacity[api.ResourcePods]; q.Value() != 50 {
		t.Errorf("pods capacity = %s", q.String())
	}
	cpuCap, cpuAlloc := n.Status.Capacity[api.ResourceCPU], n.Status.Allocatable[api.ResourceCPU]
	if cpuCap.MilliValue()-cpuAlloc.MilliValue() != 100 {
		t.Errorf("cpu capacity %s allocatable %s: want 100m reserved", cpuCap.String(), cpuAlloc.String())
	}
	memCap, memAlloc := n.Status.Capacity[api.ResourceMemory], n.Status.Allocatable[api.ResourceMemory]
	if memCap.Value() <= 0 || memCap.Value()-memAlloc.Value() != 100<<20 {
		t.Errorf("memory capacity %s allocatable %s: want 100Mi eviction threshold off", memCap.String(), memAlloc.String())
	}
	if es := n.Status.Capacity[api.ResourceEphemeralStorage]; es.Value() <= 0 {
		t.Errorf("ephemeral-storage capacity = %s", es.String())
	}
	if len(n.Status.Addresses) != 2 || n.Status.Addresses[0].Address != "127.0.0.1" || n.Status.Addresses[1].Address != "node-1" {
		t.Errorf("addresses = %v", n.Status.Addresses)
	}
	info := n.Status.NodeInfo
	if info.KernelVersion == "" || info.OSImage == "" || info.ContainerRuntimeVersion != "containerd://1.6.20" || info.KubeletVersion == "" || info.OperatingSystem != "linux" || info.BootID == "" {
		t.Errorf("nodeInfo = %+v", info)
	}
	if n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Errorf("daemonEndpoints = %+v", n.Status.DaemonEndpoints)
	}
	cond := func(n *api.Node, ct api.NodeConditionType) api.NodeCondition {
		for _, c := range n.Status.Conditions {
			if c.Type == ct {
				return c
			}
		}
		return api.NodeCondition{}
	}
	if r := cond(n, api.NodeReady); r.Status != api.ConditionTrue || r.Reason != "KubeletReady" || r.Message != "kubelet is posting ready status" {
		t.Errorf("Ready = %+v", r)
	}
	for _, ct := range []api.NodeConditionType{api.NodeMemoryPressure, api.NodeDiskPressure, api.NodePIDPressure} {
		if cond(n, ct).Status != api.ConditionFalse {
			t.Errorf("%s = %+v", ct, cond(n, ct))
		}
	}

	// The Lease: held by the node, owned by the Node, renewed.
	leases := client.Resource[api.Lease](c).Namespace("kube-node-lease")
	var first time.Time
	poll(t, ctx, "lease created", func() error {
		l, err := leases.Get(ctx, "node-1")
		if err != nil {
			return err
		}
		if *l.Spec.HolderIdentity != "node-1" || *l.Spec.LeaseDurationSeconds != 40 {
			t.Fatalf("lease spec = %+v", l.Spec)
		}
		if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].UID != n.UID {
			return errors.New("no owner reference to the Node yet")
		}
		first = l.Spec.RenewTime.Time
		return nil
	})
	poll(t, ctx, "lease renewed", func() error {
		l, err := leases.Get(ctx, "node-1")
		if err != nil {
			return err
		}
		if !l.Spec.RenewTime.After(first) {
			return errors.New("renewTime has not advanced")
		}
		return nil
	})

	// Others set podCIDR, cordon and taint the node; the kubelet keeps them
	// and WaitForNode sees the podCIDR.
	poll(t, ctx, "set spec", func() error {
		cur, err := nodes.Get(ctx, "node-1")
		if err != nil {
			return err
		}
		cur.Spec.PodCIDR = "10.244.3.0/24"
		cur.Spec.PodCIDRs = []string{"10.244.3.0/24"}
		cur.Spec.Unschedulable = true
		cur.Spec.Taints = append(cur.Spec.Taints, api.Taint{Key: api.TaintNodeUnschedulable, Effect: api.TaintEffectNoSchedule})
		delete(cur.Labels, "kubernetes.io/os")
		_, err = nodes.Update(ctx, cur)
		return err
	})
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	got, err := m.WaitForNode(wctx, func(n *api.Node) bool { return n.Spec.PodCIDR != "" })
	wcancel()
	if err != nil || got.Spec.PodCIDR != "10.244.3.0/24" {
		t.Fatalf("WaitForNode(podCIDR) = %v, %v", got, err)
	}

	// The runtime breaks: Ready goes False with its error, and an event.
	healthy.Store(false)
	poll(t, ctx, "NotReady", func() error {
		n, err := nodes.Get(ctx, "node-1")
		if err != nil {
			return err
		}
		if r := cond(n, api.NodeReady); r.Status != api.ConditionFalse || r.Reason != "KubeletNotReady" || !strings.Contains(r.Message, "containerd is not serving") {
			return errors.New("Ready is " + string(r.Status) + ": " + r.Message)
		}
		return nil
	})
	healthy.Store(true)
	poll(t, ctx, "Ready again", func() error {
		n, err := nodes.Get(ctx, "node-1")
		if err != nil {
			return err
		}
		if cond(n, api.NodeReady).Status != api.ConditionTrue {
			return errors.New("not ready")
		}
		return nil
	})
	evs := strings.Join(rec.Events(), "\n")
	for _, want := range []string{"Normal Starting Starting kubelet.", "NodeHasSufficientMemory", "NodeHasNoDiskPressure",
		"NodeHasSufficientPID", "Normal NodeReady Node node-1 status is now: NodeReady", "Normal NodeNotReady Node node-1 status is now: NodeNotReady"} {
		if !strings.Contains(evs, want) {
			t.Errorf("events lack %q:\n%s", want, evs)
		}
	}

	// A second kubelet start on the existing Node (a restart) reconciles its
	// labels but keeps the spec others own.
	m2 := start(t, ctx, nodestatus.Config{
		Client: c, NodeName: "node-1", NodeIP: net.ParseIP("127.0.0.1"), Labels: map[string]string{"tier": "core"},
		RootDir: t.TempDir(), RuntimeVersion: func() (string, error) { return "containerd://1.6.20", nil },
		Logger: apiservertest.Logger(), StatusUpdateFrequency: time.Hour,
	})
	poll(t, ctx, "restart reconciled", func() error {
		n, err := nodes.Get(ctx, "node-1")
		if err != nil {
			return err
		}
		if n.Labels["tier"] != "core" || n.Labels["kubernetes.io/os"] != "linux" {
			return errors.New("labels not reconciled: " + n.Labels["tier"])
		}
		if n.Spec.PodCIDR != "10.244.3.0/24" || !n.Spec.Unschedulable || len(n.Spec.Taints) != 2 {
			t.Fatalf("spec changed by re-registration: %+v", n.Spec)
		}
		return nil
	})
	if _, err := m2.WaitForNode(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func TestStatusNotWrittenWithoutChange(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := start(t, ctx, nodestatus.Config{
		Client: c, NodeName: "quiet", NodeIP: net.ParseIP("127.0.0.1"), RootDir: t.TempDir(),
		RuntimeVersion: func() (string, error) { return "containerd://1.6.20", nil }, Logger: apiservertest.Logger(),
		LeaseRenewInterval: time.Hour, StatusUpdateFrequency: 50 * time.Millisecond, StatusReportFrequency: time.Hour,
	})
	n, err := m.WaitForNode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv := n.ResourceVersion
	// Many status checks pass; with nothing changed, nothing is written.
	time.Sleep(600 * time.Millisecond)
	cur, err := client.Resource[api.Node](c).Get(ctx, "quiet")
	if err != nil {
		t.Fatal(err)
	}
	if cur.ResourceVersion != rv {
		t.Errorf("node written without a change: resourceVersion %s -> %s", rv, cur.ResourceVersion)
	}
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

// A node that registers NotReady (no pod network yet) writes Ready as soon
// as it can be, not a whole StatusUpdateFrequency later (the kubelet's
// fastStatusUpdateOnce).
func TestReadyWrittenAsSoonAsPossible(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var networkReady atomic.Bool
	start(t, ctx, nodestatus.Config{
		Client: c, NodeName: "fresh", NodeIP: net.ParseIP("127.0.0.1"), RootDir: t.TempDir(),
		RuntimeVersion: func() (string, error) { return "containerd://1.6.20", nil },
		RuntimeHealthy: func() error {
			if networkReady.Load() {
				return nil
			}
			return errors.New("network plugin not ready")
		},
		Logger: apiservertest.Logger(), LeaseRenewInterval: time.Hour,
		StatusUpdateFrequency: time.Hour, StatusReportFrequency: time.Hour,
	})
	nodes := client.Resource[api.Node](c)
	ready := func() (api.ConditionStatus, error) {
		n, err := nodes.Get(ctx, "fresh")
		if err != nil {
			return "", err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == api.NodeReady {
				return cond.Status, nil
			}
		}
		return "", errors.New("no Ready condition")
	}
	poll(t, ctx, "registered NotReady", func() error {
		if st, err := ready(); err != nil || st != api.ConditionFalse {
			return errors.New("not registered NotReady yet")
		}
		return nil
	})
	networkReady.Store(true)
	set := time.Now()
	poll(t, ctx, "Ready written", func() error {
		if st, err := ready(); err != nil || st != api.ConditionTrue {
			return errors.New("not Ready yet")
		}
		return nil
	})
	t.Logf("Ready %s after the network became ready", time.Since(set).Round(time.Millisecond))
}
