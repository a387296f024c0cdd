package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/minik8s/minik8s/kubelet/runtime"
)

// CRINamespace is the containerd namespace of containerd's CRI plugin,
// where the images a kubelet on CRI pulls are.
const CRINamespace = "k8s.io"

// CRIImageMounter mounts the image volumes of a kubelet on CRI whose
// runtime is containerd (cri.Config.ImageMounter): containerd 1.6's CRI
// has no image mounts, so the image, pulled through CRI into namespace
// k8s.io, is mounted read-only from containerd's own API as this driver
// mounts it (Runtime.MountImage), and the container gets it as a bind
// mount. It connects on first use, once the CRI runtime has said it is
// containerd; on another runtime (CRI-O) it answers
// runtime.ErrNoImageMounts.
type CRIImageMounter struct {
	address, stateDir string
	log               *slog.Logger
	// RuntimeName is the CRI runtime's Version (its RuntimeName first);
	// set it before the first mount.
	RuntimeName func(context.Context) (name, version string, err error)

	mu sync.Mutex
	rt *Runtime
}

// NewCRIImageMounter is the mounter for the CRI endpoint endpoint
// (unix:///run/containerd/containerd.sock), with its FIFO state in
// stateDir.
func NewCRIImageMounter(endpoint, stateDir string, log *slog.Logger) *CRIImageMounter {
	return &CRIImageMounter{address: strings.TrimPrefix(endpoint, "unix://"), stateDir: stateDir, log: log}
}

func (c *CRIImageMounter) runtime(ctx context.Context) (*Runtime, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rt != nil {
		return c.rt, nil
	}
	if c.RuntimeName == nil {
		return nil, runtime.ErrNoImageMounts
	}
	name, _, err := c.RuntimeName(ctx)
	if err != nil {
		return nil, err
	}
	if name != "containerd" {
		return nil, fmt.Errorf("%w (%s)", runtime.ErrNoImageMounts, name)
	}
	rt, err := New(ctx, Config{Address: c.address, Namespace: CRINamespace, StateDir: c.stateDir, Logger: c.log})
	if err != nil {
		return nil, err
	}
	c.rt = rt
	return rt, nil
}

// MountImage implements runtime.ImageMounter.
func (c *CRIImageMounter) MountImage(ctx context.Context, ref, target string) error {
	rt, err := c.runtime(ctx)
	if err != nil {
		return err
	}
	return rt.MountImage(ctx, ref, target)
}

// UnmountImage implements runtime.ImageMounter. On a runtime that is not
// containerd nothing was mounted: nothing to undo.
func (c *CRIImageMounter) UnmountImage(ctx context.Context, target string) error {
	rt, err := c.runtime(ctx)
	if errors.Is(err, runtime.ErrNoImageMounts) {
		return nil
	}
	if err != nil {
		return err
	}
	return rt.UnmountImage(ctx, target)
}

// Close closes the connection to containerd, if one was made.
func (c *CRIImageMounter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rt == nil {
		return nil
	}
	return c.rt.Close()
}
