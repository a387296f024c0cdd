package app

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestStaticPodPathConfig: staticPodPath in the KubeletConfiguration sets
// --pod-manifest-path, and the flag wins over it.
func TestStaticPodPathConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kubelet.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: /etc/kubernetes/manifests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) Options {
		t.Helper()
		var got Options
		cmd := newCommand(func(_ context.Context, o Options, _ *slog.Logger) error { got = o; return nil })
		var stdout, stderr bytes.Buffer
		if code := cmd.Execute(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return got
	}
	if o := run("--config", file); o.StaticPodPath != "/etc/kubernetes/manifests" {
		t.Errorf("staticPodPath gave %q", o.StaticPodPath)
	}
	if o := run("--config", file, "--pod-manifest-path", "/srv/pods"); o.StaticPodPath != "/srv/pods" {
		t.Errorf("--pod-manifest-path over the file gave %q", o.StaticPodPath)
	}
	if o := run(); o.StaticPodPath != "" {
		t.Errorf("default %q, want none", o.StaticPodPath)
	}
}
