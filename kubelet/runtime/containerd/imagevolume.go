package containerd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/errdefs"
	"github.com/moby/sys/mountinfo"
	"github.com/opencontainers/image-spec/identity"
)

// imageVolumeKey names the View snapshot behind the image volume mounted
// at target.
func imageVolumeKey(target string) string {
	sum := sha256.Sum256([]byte(target))
	return "minik8s-image-volume-" + hex.EncodeToString(sum[:16])
}

// MountImage mounts the root filesystem of the stored image ref (its
// layers unpacked by the default snapshotter) read-only at target, as
// containerd's CRI mounts an image volume: a View snapshot of the image's
// chain, kept from garbage collection by a gc.root label until
// UnmountImage. Mounting again at a mounted target does nothing.
func (r *Runtime) MountImage(ctx context.Context, ref, target string) error {
	ctx = r.nsctx(ctx)
	if mounted, err := mountinfo.Mounted(target); err == nil && mounted {
		return nil
	}
	img, err := r.client.GetImage(ctx, ref)
	if err != nil {
		return fmt.Errorf("image volume %s: %w", ref, err)
	}
	if ok, err := img.IsUnpacked(ctx, ""); err != nil {
		return err
	} else if !ok {
		if err := img.Unpack(ctx, ""); err != nil {
			return fmt.Errorf("unpack image %s: %w", ref, err)
		}
	}
	diffIDs, err := img.RootFS(ctx)
	if err != nil {
		return fmt.Errorf("read the layers of image %s: %w", ref, err)
	}
	sn := r.client.SnapshotService("")
	key := imageVolumeKey(target)
	mounts, err := sn.View(ctx, key, identity.ChainID(diffIDs).String(),
		snapshots.WithLabels(map[string]string{"containerd.io/gc.root": time.Now().UTC().Format(time.RFC3339)}))
	if errdefs.IsAlreadyExists(err) {
		mounts, err = sn.Mounts(ctx, key)
	}
	if err != nil {
		return fmt.Errorf("view snapshot of image %s: %w", ref, err)
	}
	for i := range mounts {
		mounts[i].Options = append(mounts[i].Options, "ro")
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return err
	}
	if err := mount.All(mounts, target); err != nil {
		return fmt.Errorf("mount image %s at %s: %w", ref, target, err)
	}
	return nil
}

// UnmountImage undoes MountImage: the mount at target and its snapshot.
func (r *Runtime) UnmountImage(ctx context.Context, target string) error {
	ctx = r.nsctx(ctx)
	if err := mount.UnmountAll(target, 0); err != nil {
		return fmt.Errorf("unmount image volume %s: %w", target, err)
	}
	if err := r.client.SnapshotService("").Remove(ctx, imageVolumeKey(target)); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove the snapshot of image volume %s: %w", target, err)
	}
	return nil
}
