package app

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/internal/daemon"
)

// TestControlPlaneScriptFlags reads the apiserver flags that
// scripts/install-control-plane.sh writes for deploy/systemd/apiserver.service
// (--print-env) and parses and validates them as the apiserver does: the
// control plane of one's own VMs is not a node, so the apiserver keeps the
// routes to the nodes' pod CIDRs itself (--pod-routes) and reaches webhooks
// and aggregated APIs at pod IPs; --no-pod-routes leaves them to the kubelet
// of a control plane that is a node too.
func TestControlPlaneScriptFlags(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "..", "scripts", "install-control-plane.sh")
	for _, tc := range []struct {
		args       []string
		wantRoutes bool
	}{
		{nil, true},
		{[]string{"--no-pod-routes"}, false},
		{[]string{"--tls-san", "cp.example", "--", "--min-request-timeout=30m"}, true},
	} {
		args := append([]string{script, "--advertise-address", "192.0.2.10", "--print-env"}, tc.args...)
		out, err := exec.Command("bash", args...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var flags []string
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "APISERVER_ARGS="); ok {
				flags = strings.Fields(strings.Trim(v, `"`))
			}
		}
		if flags == nil {
			t.Fatalf("%v: no APISERVER_ARGS in\n%s", args, out)
		}
		var fss daemon.FlagSets
		o := DefaultOptions()
		o.AddFlags(&fss)
		if err := fss.Parse(flags); err != nil {
			t.Fatalf("%v: apiserver flags %q: %v", tc.args, flags, err)
		}
		if err := o.Validate(); err != nil {
			t.Errorf("%v: apiserver flags %q: %v", tc.args, flags, err)
		}
		if o.EtcdClientURL != "https://127.0.0.1:2379" {
			t.Errorf("%v: apiserver flags %q: --embedded-etcd-client-url %q, want kubeadm's https://127.0.0.1:2379", tc.args, flags, o.EtcdClientURL)
		}
		if o.PodRoutes != tc.wantRoutes {
			t.Errorf("%v: apiserver flags %q: --pod-routes %v, want %v", tc.args, flags, o.PodRoutes, tc.wantRoutes)
		}
	}
}
