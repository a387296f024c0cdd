package layers

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/minik8s/minik8s"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// list runs `go list -json` from the module root, with -deps when deps is
// set (then the named packages and everything they link are listed).
func list(t *testing.T, deps bool, patterns ...string) []pkg {
	t.Helper()
	args := []string{"list", "-json"}
	if deps {
		args = append(args, "-deps")
	}
	cmd := exec.Command("go", append(args, patterns...)...)
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// linked returns the import paths a binary built from patterns links that
// have one of the prefixes.
func linked(t *testing.T, patterns []string, prefixes ...string) []string {
	t.Helper()
	var bad []string
	for _, p := range list(t, true, patterns...) {
		for _, pre := range prefixes {
			if strings.HasPrefix(p.ImportPath, pre) {
				bad = append(bad, p.ImportPath)
			}
		}
	}
	return bad
}

// TestKubeletCoreLinksNoDriver: the pod manager and everything it imports
// see the container runtime only through the kubelet's own interface; the
// containerd driver is wired in by the composition root alone.
func TestKubeletCoreLinksNoDriver(t *testing.T) {
	if bad := linked(t, []string{"./kubelet/pods"}, "github.com/containerd/"); len(bad) > 0 {
		t.Errorf("kubelet/pods links %d containerd packages, want none; first: %s", len(bad), bad[0])
	}
}

// TestProductionBinariesLinkNoTestImageBuilder: the image the kubelet's
// tests build from the host's busybox is a test fixture, not part of the
// kubelet users run.
func TestProductionBinariesLinkNoTestImageBuilder(t *testing.T) {
	if bad := linked(t, []string{"./kubelet", "./kubelet/app"}, module+"/kubelet/testimage"); len(bad) > 0 {
		t.Errorf("the kubelet binary links %v", bad)
	}
}

// TestControllersDoNotImportTheScheduler: what the DaemonSet controller
// and the scheduler share (node affinity, taints and tolerations) lives in
// internal/podplacement, not in the scheduler's insides.
func TestControllersDoNotImportTheScheduler(t *testing.T) {
	if bad := linked(t, []string{"./controller-manager/..."}, module+"/scheduler/"); len(bad) > 0 {
		t.Errorf("controller-manager links %v", bad)
	}
}

// TestAPIImportsNothingInternal: package api and its subpackages are the
// bottom layer every component builds on.
func TestAPIImportsNothingInternal(t *testing.T) {
	for _, p := range list(t, false, "./api/...") {
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if strings.HasPrefix(imp, module+"/") && !strings.HasPrefix(imp, module+"/api") {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
	}
}

// TestVerbsDoNotImportVerbs: what several kubectl-lite verbs share is a
// package of its own outside cmd/; only the root command assembles the
// verbs.
func TestVerbsDoNotImportVerbs(t *testing.T) {
	cmd := module + "/kubectl-lite/cmd/"
	for _, p := range list(t, false, "./kubectl-lite/cmd/...") {
		if p.ImportPath == cmd+"root" {
			continue
		}
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if strings.HasPrefix(imp, cmd) && imp != p.ImportPath {
				t.Errorf("%s imports the verb %s", strings.TrimPrefix(p.ImportPath, cmd), strings.TrimPrefix(imp, cmd))
			}
		}
	}
}
