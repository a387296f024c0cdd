package runtime

import (
	"strings"
	"testing"
)

func TestImageNames(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                    "docker.io/library/busybox:latest",
		"127.0.0.1:5000/a/b:v1":      "127.0.0.1:5000/a/b:v1",
		"minik8s.local/busybox":      "minik8s.local/busybox:latest",
		"registry.k8s.io/pause:3.10": "registry.k8s.io/pause:3.10",
	} {
		if got, err := NormalizeImage(in); err != nil || got != want {
			t.Errorf("NormalizeImage(%q) = %q %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]bool{"busybox": true, "busybox:latest": true, "busybox:1.36": false, "busybox@sha256:" + strings.Repeat("a", 64): false} {
		if got := IsLatest(in); got != want {
			t.Errorf("IsLatest(%q) = %v", in, got)
		}
	}
	if got := ImageID("127.0.0.1:5000/a/b:v1", "sha256:abc"); got != "127.0.0.1:5000/a/b@sha256:abc" {
		t.Errorf("ImageID %q", got)
	}
	if _, err := NormalizeImage("no spaces allowed"); err == nil {
		t.Error("invalid image accepted")
	}
}
