package nodestatus

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

func TestAllocatable(t *testing.T) {
	t.Parallel()
	gi := int64(1 << 30)
	tests := []struct {
		name     string
		capacity api.ResourceList
		reserved api.ResourceList
		want     map[api.ResourceName]string
	}{
		{
			name: "defaults only take eviction thresholds",
			capacity: api.ResourceList{
				api.ResourceCPU:              resource.MustParse("2"),
				api.ResourceMemory:           *resource.NewQuantity(4*gi, resource.BinarySI),
				api.ResourcePods:             resource.MustParse("110"),
				api.ResourceEphemeralStorage: *resource.NewQuantity(100*gi, resource.BinarySI),
			},
			want: map[api.ResourceName]string{"cpu": "2", "memory": "3996Mi", "pods": "110", "ephemeral-storage": "92160Mi"},
		},
		{
			name: "system and kube reserved",
			capacity: api.ResourceList{
				api.ResourceCPU:    resource.MustParse("4"),
				api.ResourceMemory: *resource.NewQuantity(8*gi, resource.BinarySI),
			},
			reserved: api.ResourceList{api.ResourceCPU: resource.MustParse("500m"), api.ResourceMemory: resource.MustParse("1Gi")},
			want:     map[api.ResourceName]string{"cpu": "3500m", "memory": "7068Mi"},
		},
		{
			name:     "never below zero",
			capacity: api.ResourceList{api.ResourceMemory: resource.MustParse("50Mi"), api.ResourceCPU: resource.MustParse("1")},
			reserved: api.ResourceList{api.ResourceCPU: resource.MustParse("2")},
			want:     map[api.ResourceName]string{"cpu": "0", "memory": "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := allocatable(tt.capacity, tt.reserved, DefaultThresholds)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, w := range tt.want {
				if q := got[k]; q.Cmp(resource.MustParse(w)) != 0 {
					t.Errorf("%s = %s, want %s", k, q.String(), w)
				}
			}
		})
	}
}

func TestSetStatusConditions(t *testing.T) {
	t.Parallel()
	healthy := Machine{NumCPU: 2, MemoryCapacity: 4 << 30, MemoryAvailable: 2 << 30, FsCapacity: 100 << 30, FsAvailable: 50 << 30,
		FsInodes: 1000, FsInodesFree: 900, PIDMax: 32768, Processes: 300, KernelVersion: "6.1.0", OSImage: "Debian GNU/Linux 12 (bookworm)"}
	lowMem := healthy
	lowMem.MemoryAvailable = 50 << 20
	lowDisk := healthy
	lowDisk.FsAvailable = 5 << 30
	lowInodes := healthy
	lowInodes.FsInodesFree = 10
	manyPIDs := healthy
	manyPIDs.Processes = 32000
	pidThresholds := DefaultThresholds
	pidThresholds.PIDAvailable = 1000
	fullDisk := healthy
	fullDisk.FsAvailable, fullDisk.FsInodesFree = 1<<30, 1
	// The compose nodes' --eviction-hard (deploy/node/entrypoint.sh), as kind's:
	// disk signals at 0% never report pressure.
	noDiskEviction, err := ParseThresholds("memory.available<100Mi,nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%")
	if err != nil {
		t.Fatal(err)
	}

	type want struct{ ready, mem, disk, pid api.ConditionStatus }
	tests := []struct {
		name       string
		m          Machine
		thresholds Thresholds
		runtimeErr error
		want       want
		readyMsg   string
	}{
		{"healthy", healthy, DefaultThresholds, nil, want{"True", "False", "False", "False"}, messageReady},
		{"runtime down", healthy, DefaultThresholds, errors.New("container runtime is down: dial unix: no such file"), want{"False", "False", "False", "False"}, "container runtime is down: dial unix: no such file"},
		{"memory pressure", lowMem, DefaultThresholds, nil, want{"True", "True", "False", "False"}, messageReady},
		{"disk pressure", lowDisk, DefaultThresholds, nil, want{"True", "False", "True", "False"}, messageReady},
		{"inode pressure", lowInodes, DefaultThresholds, nil, want{"True", "False", "True", "False"}, messageReady},
		{"no pid threshold by default", manyPIDs, DefaultThresholds, nil, want{"True", "False", "False", "False"}, messageReady},
		{"pid pressure", manyPIDs, pidThresholds, nil, want{"True", "False", "False", "True"}, messageReady},
		{"disk eviction off", fullDisk, noDiskEviction, nil, want{"True", "False", "False", "False"}, messageReady},
		{"disk eviction off, memory kept", lowMem, noDiskEviction, nil, want{"True", "True", "False", "False"}, messageReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &api.Node{}
			evs := setStatus(n, statusInput{Machine: tt.m, MaxPods: 110, Thresholds: tt.thresholds, NodeIP: net.ParseIP("10.0.0.5"),
				Hostname: "n1", RuntimeVersion: "containerd://1.6.20", KubeletVersion: "v0.1.0", KubeletPort: 10250, RuntimeErr: tt.runtimeErr, Now: time.Now()})
			if len(evs) != 4 {
				t.Errorf("events on a new node = %v, want one per condition", evs)
			}
			got := map[api.NodeConditionType]api.NodeCondition{}
			for _, c := range n.Status.Conditions {
				got[c.Type] = c
			}
			check := func(ct api.NodeConditionType, w api.ConditionStatus) {
				if got[ct].Status != w {
					t.Errorf("%s = %s (%s), want %s", ct, got[ct].Status, got[ct].Reason, w)
				}
			}
			check(api.NodeReady, tt.want.ready)
			check(api.NodeMemoryPressure, tt.want.mem)
			check(api.NodeDiskPressure, tt.want.disk)
			check(api.NodePIDPressure, tt.want.pid)
			if got[api.NodeReady].Message != tt.readyMsg {
				t.Errorf("Ready message = %q, want %q", got[api.NodeReady].Message, tt.readyMsg)
			}
			if tt.want.mem == "False" && got[api.NodeMemoryPressure].Reason != "KubeletHasSufficientMemory" {
				t.Errorf("MemoryPressure reason = %q", got[api.NodeMemoryPressure].Reason)
			}
			if n.Status.NodeInfo.ContainerRuntimeVersion != "containerd://1.6.20" || n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
				t.Errorf("nodeInfo/daemonEndpoints = %+v %+v", n.Status.NodeInfo, n.Status.DaemonEndpoints)
			}
			if len(n.Status.Addresses) != 2 || n.Status.Addresses[0] != (api.NodeAddress{Type: api.NodeInternalIP, Address: "10.0.0.5"}) ||
				n.Status.Addresses[1] != (api.NodeAddress{Type: api.NodeHostName, Address: "n1"}) {
				t.Errorf("addresses = %v", n.Status.Addresses)
			}
		})
	}
}

func TestSetStatusTransitions(t *testing.T) {
	t.Parallel()
	m := Machine{NumCPU: 1, MemoryCapacity: 1 << 30, MemoryAvailable: 1 << 29, FsCapacity: 1 << 30, FsAvailable: 1 << 29}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := statusInput{Machine: m, MaxPods: 110, Thresholds: DefaultThresholds, Now: t0}
	n := &api.Node{}
	setStatus(n, in)
	before := api.DeepCopy(&n.Status)

	// Same readings later: only heartbeats move, no events, no change.
	in.Now = t0.Add(time.Minute)
	if evs := setStatus(n, in); len(evs) != 0 {
		t.Errorf("events without a change = %v", evs)
	}
	if statusChanged(before, &n.Status) {
		t.Error("statusChanged reports a change when only heartbeat times moved")
	}
	for _, c := range n.Status.Conditions {
		if !c.LastHeartbeatTime.Time.Equal(in.Now) || !c.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("%s heartbeat %v transition %v", c.Type, c.LastHeartbeatTime, c.LastTransitionTime)
		}
	}

	// The runtime goes down: Ready flips, with NodeNotReady and a new transition time.
	in.Now = t0.Add(2 * time.Minute)
	in.RuntimeErr = errors.New("container runtime is down")
	evs := setStatus(n, in)
	if len(evs) != 1 || evs[0].Reason != eventNodeNotReady {
		t.Errorf("events = %v, want NodeNotReady", evs)
	}
	if !statusChanged(before, &n.Status) {
		t.Error("statusChanged misses Ready going False")
	}
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady && (!c.LastTransitionTime.Time.Equal(in.Now) || c.Reason != reasonNotReady) {
			t.Errorf("Ready = %+v", c)
		}
	}
}

func TestParseDefaultRoute(t *testing.T) {
	t.Parallel()
	const header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
	tests := []struct {
		name, table, want string
		wantErr           bool
	}{
		{"one default", header + "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
			"eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", "eth0", false},
		{"lowest metric wins", header + "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n" +
			"eth1\t00000000\t0101000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n", "eth1", false},
		{"down route skipped", header + "eth0\t00000000\t0101A8C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n" +
			"eth1\t00000000\t0101000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n", "eth1", false},
		{"no default", header + "eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDefaultRoute(strings.NewReader(tt.table))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestChooseIP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	route := filepath.Join(dir, "route")
	if err := os.WriteFile(route, []byte("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\nens3\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cidr := func(s string) net.Addr { ip, n, _ := net.ParseCIDR(s); n.IP = ip; return n }
	addrs := map[string][]net.Addr{"ens3": {cidr("fe80::1/64"), cidr("2001:db8::5/64"), cidr("192.168.1.20/24")}}
	lookup := func(name string) ([]net.Addr, error) { return addrs[name], nil }
	tests := []struct {
		name   string
		nodeIP net.IP
		addrs  []net.Addr
		want   string
	}{
		{"--node-ip wins", net.ParseIP("10.1.2.3"), nil, "10.1.2.3"},
		{"IPv4 of the default route interface", nil, addrs["ens3"], "192.168.1.20"},
		{"global IPv6 when there is no IPv4", nil, []net.Addr{cidr("fe80::1/64"), cidr("2001:db8::5/64")}, "2001:db8::5"},
		{"none usable", nil, []net.Addr{cidr("fe80::1/64")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addrs["ens3"] = tt.addrs
			ip, err := chooseIP(tt.nodeIP, route, lookup)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %v, want an error", ip)
				}
				return
			}
			if err != nil || ip.String() != tt.want {
				t.Errorf("got %v, %v; want %s", ip, err, tt.want)
			}
		})
	}
}

// TestSetStatusKeepsExtendedResources: an extended resource patched into
// the node's capacity and allocatable (as the conformance specs do with
// scheduling.k8s.io/foo) survives the kubelet's next status, in both.
func TestSetStatusKeepsExtendedResources(t *testing.T) {
	t.Parallel()
	m := Machine{NumCPU: 1, MemoryCapacity: 1 << 30, MemoryAvailable: 1 << 29, FsCapacity: 1 << 30, FsAvailable: 1 << 29}
	in := statusInput{Machine: m, MaxPods: 110, Thresholds: DefaultThresholds, Now: time.Now()}
	n := &api.Node{}
	setStatus(n, in)
	foo := api.ResourceName("scheduling.k8s.io/foo")
	n.Status.Capacity[foo] = resource.MustParse("5")
	n.Status.Allocatable[foo] = resource.MustParse("5")
	n.Status.Capacity["kubernetes.io/not-extended"] = resource.MustParse("1")
	setStatus(n, in)
	for _, rl := range []api.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		if q, ok := rl[foo]; !ok || q.Value() != 5 {
			t.Errorf("%s = %v (present %v), want 5", foo, q.String(), ok)
		}
		if _, ok := rl["kubernetes.io/not-extended"]; ok {
			t.Errorf("a native resource name the machine does not report was kept: %v", rl)
		}
	}
	if q := n.Status.Capacity[api.ResourceCPU]; q.Value() != 1 {
		t.Errorf("cpu capacity = %v, want 1", q.String())
	}
}
