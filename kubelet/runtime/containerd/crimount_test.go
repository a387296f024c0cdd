package containerd

import (
	"context"
	"errors"
	"testing"

	"github.com/minik8s/minik8s/kubelet/runtime"
)

// On a CRI runtime that is not containerd the mounter connects to
// nothing: mounting says the runtime cannot mount image volumes, and
// unmounting has nothing to undo.
func TestCRIImageMounterOtherRuntime(t *testing.T) {
	m := NewCRIImageMounter("unix:///var/run/crio/crio.sock", t.TempDir(), nil)
	asked := 0
	m.RuntimeName = func(context.Context) (string, string, error) {
		asked++
		return "cri-o", "1.34.0", nil
	}
	ctx := context.Background()
	if err := m.MountImage(ctx, "docker.io/library/busybox:latest", t.TempDir()); !errors.Is(err, runtime.ErrNoImageMounts) {
		t.Fatalf("MountImage on CRI-O: %v, want %v", err, runtime.ErrNoImageMounts)
	}
	if err := m.UnmountImage(ctx, t.TempDir()); err != nil {
		t.Fatalf("UnmountImage on CRI-O: %v, want nil", err)
	}
	if asked != 2 || m.rt != nil {
		t.Fatalf("runtime asked %d times, connection %v; want 2 and none", asked, m.rt)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
