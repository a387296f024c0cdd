package app_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/scheduler/app"
)

// TestControlPlaneScriptFlags parses and validates the scheduler flags
// scripts/install-control-plane.sh writes for deploy/systemd/
// scheduler.service (--print-env): the HTTPS port delegates to the
// apiserver with the scheduler's own kubeconfig, as kubeadm's does.
func TestControlPlaneScriptFlags(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "..", "scripts", "install-control-plane.sh")
	out, err := exec.Command("bash", script, "--advertise-address", "192.0.2.10", "--print-env").Output()
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "SCHEDULER_ARGS="); ok {
			flags = strings.Fields(strings.Trim(v, `"`))
		}
	}
	o := app.DefaultOptions()
	var fss daemon.FlagSets
	o.AddFlags(&fss)
	if err := fss.Parse(flags); err != nil {
		t.Fatalf("scheduler flags %q: %v", flags, err)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("scheduler flags %q: %v", flags, err)
	}
	kc := o.Client.Kubeconfig
	if !strings.HasSuffix(kc, "/scheduler.kubeconfig") || o.Serving.Authentication.Kubeconfig != kc || o.Serving.Authorization.Kubeconfig != kc {
		t.Errorf("scheduler flags %q: --kubeconfig %q, --authentication-kubeconfig %q, --authorization-kubeconfig %q, want the scheduler's kubeconfig for all three",
			flags, kc, o.Serving.Authentication.Kubeconfig, o.Serving.Authorization.Kubeconfig)
	}
}
