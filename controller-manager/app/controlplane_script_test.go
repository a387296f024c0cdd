package app_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/daemon"
)

// TestControlPlaneScriptFlags parses and validates the controller-manager flags
// scripts/install-control-plane.sh writes for deploy/systemd/
// controller-manager.service (--print-env): the HTTPS port delegates to the
// apiserver with the controller-manager's own kubeconfig, as kubeadm's does.
func TestControlPlaneScriptFlags(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "..", "scripts", "install-control-plane.sh")
	out, err := exec.Command("bash", script, "--advertise-address", "192.0.2.10", "--print-env").Output()
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "CONTROLLER_MANAGER_ARGS="); ok {
			flags = strings.Fields(strings.Trim(v, `"`))
		}
	}
	o := app.DefaultOptions()
	var fss daemon.FlagSets
	o.AddFlags(&fss)
	if err := fss.Parse(flags); err != nil {
		t.Fatalf("controller-manager flags %q: %v", flags, err)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("controller-manager flags %q: %v", flags, err)
	}
	kc := o.Client.Kubeconfig
	if !strings.HasSuffix(kc, "/controller-manager.kubeconfig") || o.Serving.Authentication.Kubeconfig != kc || o.Serving.Authorization.Kubeconfig != kc {
		t.Errorf("controller-manager flags %q: --kubeconfig %q, --authentication-kubeconfig %q, --authorization-kubeconfig %q, want the controller-manager's kubeconfig for all three",
			flags, kc, o.Serving.Authentication.Kubeconfig, o.Serving.Authorization.Kubeconfig)
	}
}
