package oracle

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Path returns the path of the named binary ("kubectl", "kube-scheduler",
// "kube-controller-manager", "kube-apiserver", "helm", or another name
// scripts/oracle.sh builds), building it on first use. A
// build that fails fails the test: the oracle is part of the test, not an
// optional extra.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(repoRoot(), "scripts", "oracle.sh"), name)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("building the oracle %s: %v\n%s", name, err, stderr.String())
	}
	p := filepath.Join(strings.TrimSpace(stdout.String()), name)
	if name == "kubectl" && os.Getenv("KUBECACHEDIR") == "" {
		// kubectl keeps discovery for 6 hours under ~/.kube/cache, keyed
		// by host and port only: a test's apiserver on a loopback port an
		// earlier test's apiserver had would be read with that one's
		// groups. This test process keeps its own.
		dir, err := os.MkdirTemp("", "kubectl-cache-")
		if err != nil {
			tb.Fatal(err)
		}
		os.Setenv("KUBECACHEDIR", dir)
	}
	built[name] = p
	return p
}

// repoRoot is the repository holding this file (scripts/oracle.sh is
// there), found from the source path, or from the working directory (a
// package directory under go test) when built with -trimpath.
func repoRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..")
	}
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "scripts", "oracle.sh")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
