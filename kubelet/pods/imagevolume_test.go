package pods_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/api"
	rtcontainerd "github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// An image volume (volumes[].image), as the conformance spec "ImageVolume
// should succeed with pod and pull policy of Always" uses one: the image's
// root filesystem appears read-only at the mount path, and goes (mount
// and snapshot) with the pod.
func TestImageVolume(t *testing.T) {
	forEachDriver(t, testImageVolume)
}

func testImageVolume(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	p := nd.pod("imgvol", api.Container{Name: "main", Command: sh("sleep 600"),
		VolumeMounts: []api.VolumeMount{{Name: "volume", MountPath: "/volume"}}})
	src, _ := json.Marshal(map[string]string{"reference": testimage.Ref, "pullPolicy": "IfNotPresent"})
	p.Spec.Volumes = []api.Volume{{Name: "volume", VolumeSource: api.VolumeSource{Image: src}}}
	p = nd.create(p)
	p = nd.waitPod("imgvol", 60*time.Second, "Running", running)
	if out, code := nd.exec(p, "main", "ls", "/volume/bin/busybox"); code != 0 {
		t.Fatalf("ls /volume/bin/busybox: exit %d: %s", code, out)
	}
	if out, code := nd.exec(p, "main", "sh", "-c", "touch /volume/x"); code == 0 || !strings.Contains(out, "Read-only file system") {
		t.Errorf("touch in the image volume: exit %d %q, want a read-only file system", code, out)
	}
	nd.waitEvent("imgvol", `Pulled: Container image "`+testimage.Ref+`" already present on machine`, 10*time.Second)

	target := filepath.Join(nd.opts.RootDir, "pods", string(p.UID), "volumes", "kubernetes.io~image", "volume")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := nd.pods().Delete(ctx, "imgvol", nil); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(target); os.IsNotExist(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the image volume at %s is still there after the pod's deletion", target)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// On CRI the image is in the CRI plugin's namespace.
	ns, rt := nd.ns, nd.rt
	if nd.criEndpoint != "" {
		ns = rtcontainerd.CRINamespace
		var err error
		if rt, err = rtcontainerd.New(ctx, rtcontainerd.Config{Address: socket, Namespace: ns, StateDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
	}
	sn := rt.Client().SnapshotService("")
	n := 0
	_ = sn.Walk(namespaces.WithNamespace(ctx, ns), func(_ context.Context, info snapshots.Info) error {
		if strings.HasPrefix(info.Name, "minik8s-image-volume-") {
			n++
		}
		return nil
	})
	if n != 0 {
		t.Errorf("%d image volume snapshots left after the pod's deletion", n)
	}
}

// An image volume with pull policy Always pulls its image (here from a
// local registry, the image absent before) before mounting it.
func TestImageVolumePullAlways(t *testing.T) {
	img, err := testimage.Busybox()
	if err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewServer(&testimage.Registry{Image: img, Tags: map[string]bool{"v1": true}})
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	nd := newNode(t, func(nd *node) { nd.insecure = []string{host} })
	ref := host + "/test/volume:v1"
	p := nd.pod("imgpull", api.Container{Name: "main", Command: sh("sleep 600"),
		VolumeMounts: []api.VolumeMount{{Name: "volume", MountPath: "/volume"}}})
	src, _ := json.Marshal(map[string]string{"reference": ref, "pullPolicy": "Always"})
	p.Spec.Volumes = []api.Volume{{Name: "volume", VolumeSource: api.VolumeSource{Image: src}}}
	nd.create(p)
	p = nd.waitPod("imgpull", 60*time.Second, "Running", running)
	nd.waitEvent("imgpull", `Pulling: Pulling image "`+ref+`"`, 5*time.Second)
	nd.waitEvent("imgpull", `Pulled: Successfully pulled image "`+ref+`" in `, 5*time.Second)
	if out, code := nd.exec(p, "main", "ls", "/volume/bin/busybox"); code != 0 {
		t.Fatalf("ls /volume/bin/busybox: exit %d: %s", code, out)
	}
}
