package nodestatus

import (
	"reflect"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestParseTaints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []api.Taint
		wantErr bool
	}{
		{"", nil, false},
		{"dedicated=gpu:NoSchedule,spot:PreferNoSchedule", []api.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}, {Key: "spot", Effect: "PreferNoSchedule"}}, false},
		{"a=b", nil, true},
		{"a=b:Sometimes", nil, true},
		{"=b:NoExecute", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseTaints(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("ParseTaints(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseThresholds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Thresholds
		wantErr bool
	}{
		{DefaultOptions().EvictionHard, DefaultThresholds, false},
		{"memory.available<1Gi,pid.available<500", Thresholds{MemoryAvailable: 1 << 30, PIDAvailable: 500}, false},
		{"memory.available<10%", Thresholds{}, true},
		{"nodefs.available<1Gi", Thresholds{}, true},
		{"disk.free<1", Thresholds{}, true},
		{"memory.available>1Gi", Thresholds{}, true},
	}
	for _, tt := range tests {
		got, err := ParseThresholds(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseThresholds(%q) = %+v, %v; want %+v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestOptionsConfig(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	o.HostnameOverride = " Node-A "
	o.NodeIP = "10.0.0.7"
	o.NodeLabels = "tier=edge,node.kubernetes.io/pool=a"
	o.SystemReserved = "cpu=100m,memory=256Mi"
	c, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeName != "node-a" || c.NodeIP.String() != "10.0.0.7" || c.Labels["tier"] != "edge" ||
		c.MaxPods != 110 || c.LeaseRenewInterval.Seconds() != 10 || c.SystemReserved.Cpu().String() != "100m" {
		t.Errorf("config = %+v", c)
	}
	o.NodeLabels = "node-role.kubernetes.io/worker="
	if _, err := o.Config(); err == nil || !strings.Contains(err.Error(), "node-role.kubernetes.io/worker") {
		t.Errorf("node-role label accepted: %v", err)
	}
	o.NodeLabels = ""
	o.SystemReserved = "gpu=1"
	if _, err := o.Config(); err == nil {
		t.Error("unknown reserved resource accepted")
	}
}

func TestIsKubeletLabel(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"tier": true, "example.com/gpu": true, "kubernetes.io/hostname": true, "topology.kubernetes.io/zone": true,
		"node.kubernetes.io/pool": true, "foo.kubelet.kubernetes.io/x": true,
		"node-role.kubernetes.io/worker": false, "kubernetes.io/role": false, "x.k8s.io/y": false,
		"node-restriction.kubernetes.io/secure": false,
	} {
		if got := IsKubeletLabel(key); got != want {
			t.Errorf("IsKubeletLabel(%q) = %v, want %v", key, got, want)
		}
	}
}
