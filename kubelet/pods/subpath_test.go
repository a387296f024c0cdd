package pods_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// TestSubPathCannotLeaveVolume is issue 26 item 3 with real containers.
// An init container plants links out of an emptyDir (`ln -s / /vol/x`,
// and `/vol/m -> /` for a middle component). A container mounting
// subPath x (or m/tmp) must not get the node's root file system: as in
// kube it does not start, CreateContainerConfigError with kube's message
// and a Failed event. An ordinary subPath mounts its subdirectory, a
// missing one is created inside the volume, subPathExpr $(POD_NAME) from
// a downward-API variable mounts that subdirectory, not the whole
// volume; deleting the pod unmounts the subPaths before the pod directory
// goes, so a hostPath's files mounted by subPath survive.
func TestSubPathCannotLeaveVolume(t *testing.T) {
	nd := newNode(t)
	hostDir := filepath.Join(t.TempDir(), "host")
	if err := os.MkdirAll(filepath.Join(hostDir, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostDir, "keep", "marker"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	mount := func(sub string) []api.VolumeMount {
		return []api.VolumeMount{{Name: "vol", MountPath: "/data", SubPath: sub}}
	}
	p := nd.pod("subpath",
		api.Container{Name: "ok", Command: sh("sleep 600"), VolumeMounts: append(mount("ok"),
			api.VolumeMount{Name: "vol", MountPath: "/fresh", SubPath: "new/dir"},
			api.VolumeMount{Name: "host", MountPath: "/keep", SubPath: "keep"})},
		api.Container{Name: "expr", Command: sh("sleep 600"),
			VolumeMounts: []api.VolumeMount{{Name: "vol", MountPath: "/data", SubPathExpr: "$(POD_NAME)"}},
			Env:          []api.EnvVar{{Name: "POD_NAME", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
		api.Container{Name: "escape", Command: sh("ls /data; sleep 600"), VolumeMounts: mount("x")},
		api.Container{Name: "middle", Command: sh("ls /data; sleep 600"), VolumeMounts: mount("m/tmp")},
	)
	p.Spec.InitContainers = []api.Container{{Name: "plant", Image: p.Spec.Containers[0].Image, ImagePullPolicy: api.PullIfNotPresent,
		Command:      sh("mkdir -p /vol/ok /vol/subpath && echo inside > /vol/ok/marker && echo expr > /vol/subpath/marker && ln -s / /vol/x && ln -s / /vol/m"),
		VolumeMounts: []api.VolumeMount{{Name: "vol", MountPath: "/vol"}}}}
	dirOrCreate := api.HostPathDirectoryOrCreate
	p.Spec.Volumes = []api.Volume{
		{Name: "vol", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: api.VolumeSource{HostPath: &api.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}},
	}
	p = nd.create(p)

	refused := func(p *api.Pod, c string) bool {
		w := status(p, c).State.Waiting
		return w != nil && w.Reason == "CreateContainerConfigError"
	}
	got := nd.waitPod("subpath", 90*time.Second, "ok and expr running, escape and middle refused", func(p *api.Pod) bool {
		return status(p, "ok").State.Running != nil && status(p, "expr").State.Running != nil && refused(p, "escape") && refused(p, "middle")
	})
	for _, c := range []string{"escape", "middle"} {
		want := `failed to prepare subPath for volumeMount "vol" of container "` + c + `"`
		if msg := status(got, c).State.Waiting.Message; msg != want {
			t.Errorf("%s: message %q, want %q", c, msg, want)
		}
		nd.waitEvent("subpath", "Failed: Error: "+want, 10*time.Second)
	}
	// Held there: a later attempt does not start it either.
	time.Sleep(3 * time.Second)
	got = nd.waitPod("subpath", 5*time.Second, "status", func(*api.Pod) bool { return true })
	if !refused(got, "escape") || status(got, "escape").RestartCount != 0 || got.Status.Phase != api.PodPending {
		t.Fatalf("escape after retries: %s", statusString(got))
	}

	if out, code := nd.exec(got, "ok", "cat", "/data/marker"); code != 0 || out != "inside\n" {
		t.Errorf("subPath ok: %q (%d)", out, code)
	}
	if out, code := nd.exec(got, "ok", "cat", "/keep/marker"); code != 0 || out != "host" {
		t.Errorf("hostPath subPath keep: %q (%d)", out, code)
	}
	// The missing subPath was created in the volume, writable.
	if out, code := nd.exec(got, "ok", "sh", "-c", "echo w > /fresh/f && cat /fresh/f"); code != 0 || out != "w\n" {
		t.Errorf("created subPath: %q (%d)", out, code)
	}
	vol := filepath.Join(nd.opts.RootDir, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "vol")
	if b, err := os.ReadFile(filepath.Join(vol, "new", "dir", "f")); err != nil || string(b) != "w\n" {
		t.Errorf("created subPath on the host: %q %v", b, err)
	}
	out, code := nd.exec(got, "expr", "sh", "-c", "cat /data/marker; ls /data")
	if code != 0 || out != "expr\nmarker\n" {
		t.Errorf("subPathExpr $(POD_NAME) shows %q (%d), want the subpath directory", out, code)
	}

	// Deleting the pod unmounts the subPaths first: the hostPath keeps
	// its files, the pod directory goes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nd.pods().Delete(ctx, "subpath", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := nd.pods().Get(ctx, "subpath")
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod not deleted: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	podDir := filepath.Join(nd.opts.RootDir, "pods", string(p.UID))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(podDir); os.IsNotExist(err) {
			break
		}
	}
	if _, err := os.Stat(podDir); !os.IsNotExist(err) {
		t.Errorf("pod directory left: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(hostDir, "keep", "marker")); err != nil || string(b) != "host" {
		t.Fatalf("the hostPath lost its file through the subPath mount: %q %v", b, err)
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(mi), podDir) {
		t.Fatalf("mounts left under %s", podDir)
	}
}

// TestSubPathExprMissingVariable: a subPathExpr naming an unset variable
// does not start the container (kube's "missing value for" error) rather
// than mount the whole volume.
func TestSubPathExprMissingVariable(t *testing.T) {
	nd := newNode(t)
	p := nd.pod("subpathexpr", api.Container{Name: "main", Command: sh("sleep 600"),
		VolumeMounts: []api.VolumeMount{{Name: "vol", MountPath: "/data", SubPathExpr: "$(NOPE)/$(EMPTY)"}},
		Env:          []api.EnvVar{{Name: "EMPTY", Value: ""}}})
	p.Spec.Volumes = []api.Volume{{Name: "vol", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}}
	nd.create(p)
	got := nd.waitPod("subpathexpr", 60*time.Second, "CreateContainerConfigError", func(p *api.Pod) bool {
		w := status(p, "main").State.Waiting
		return w != nil && w.Reason == "CreateContainerConfigError"
	})
	if msg := status(got, "main").State.Waiting.Message; msg != "missing value for EMPTY, NOPE" {
		t.Fatalf("message %q", msg)
	}
	if slices.ContainsFunc(nd.events("subpathexpr"), func(e string) bool { return strings.HasPrefix(e, "Started:") }) {
		t.Fatalf("started: %q", nd.events("subpathexpr"))
	}
}
