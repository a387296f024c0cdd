package testimage

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/containerd/v2/pkg/namespaces"
)

// DeleteNamespace removes a test's containerd namespace once its
// containers are gone: images, content blobs, leftover snapshots, then the
// namespace itself.
func DeleteNamespace(ctx context.Context, c *containerd.Client, ns string) error {
	ctx = namespaces.WithNamespace(ctx, ns)
	imgs, _ := c.ImageService().List(ctx)
	for _, i := range imgs {
		_ = c.ImageService().Delete(ctx, i.Name)
	}
	var blobs []content.Info
	_ = c.ContentStore().Walk(ctx, func(i content.Info) error { blobs = append(blobs, i); return nil })
	for _, b := range blobs {
		_ = c.ContentStore().Delete(ctx, b.Digest)
	}
	sn := c.SnapshotService("")
	var keys []string
	_ = sn.Walk(ctx, func(_ context.Context, i snapshots.Info) error { keys = append(keys, i.Name); return nil })
	for range 2 { // children first would need ordering; a second pass gets parents
		for _, k := range keys {
			_ = sn.Remove(ctx, k)
		}
	}
	var err error
	for range 25 {
		if err = c.NamespaceService().Delete(ctx, ns); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// RemoveCgroupTree removes the (empty) cgroup directory name and its
// children from every cgroup v1 hierarchy.
func RemoveCgroupTree(name string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, root := range roots {
		var dirs []string
		_ = filepath.Walk(filepath.Join(root, name), func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
		for _, d := range dirs {
			_ = os.Remove(d)
		}
	}
}
