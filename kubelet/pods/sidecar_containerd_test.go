package pods_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestSidecarHooksContainerd is the shape of the conformance specs
// "Container Lifecycle Hook when create a pod with lifecycle hook should
// execute poststart/prestop ... hook properly" on a real containerd: a
// sidecar serving HTTP on 8080 behind a startupProbe, and an app container
// whose postStart and preStop hooks reach the sidecar (exec) and whose
// postStart httpGet reaches it too. The postStart hooks only succeed if the
// sidecar started first; the preStop hook only if the sidecar still runs
// when the app container is stopped.
func TestSidecarHooksContainerd(t *testing.T) {
	nd := newNode(t)
	hostDir := filepath.Join(t.TempDir(), "host")
	dirOrCreate := api.HostPathDirectoryOrCreate
	always := api.ContainerRestartPolicyAlways
	fetch := func(file string) []string {
		return []string{"sh", "-c", "wget -q -O /host/" + file + ".tmp http://127.0.0.1:8080/index.html && mv /host/" + file + ".tmp /host/" + file}
	}
	p := nd.pod("hooks", api.Container{Name: "main", Command: sh("sleep 600"),
		VolumeMounts: []api.VolumeMount{{Name: "host", MountPath: "/host"}},
		Lifecycle: &api.Lifecycle{
			PostStart: &api.LifecycleHandler{Exec: &api.ExecAction{Command: fetch("poststart")}},
			PreStop:   &api.LifecycleHandler{Exec: &api.ExecAction{Command: fetch("prestop")}},
		}})
	p.Spec.InitContainers = []api.Container{{Name: "container-redirect", RestartPolicy: &always,
		Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent,
		Command: sh("mkdir -p /www; echo sidecar-up > /www/index.html; exec httpd -f -p 8080 -h /www"),
		StartupProbe: &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/index.html", Port: api.IntOrString{Type: api.Int, IntVal: 8080}}},
			PeriodSeconds: 1, FailureThreshold: 30}}}
	p.Spec.Volumes = []api.Volume{{Name: "host", VolumeSource: api.VolumeSource{HostPath: &api.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}}}
	grace := int64(15)
	p.Spec.TerminationGracePeriodSeconds = &grace
	nd.create(p)

	got := nd.waitPod("hooks", 90*time.Second, "Running and Ready", func(p *api.Pod) bool {
		return running(p) && condition(p, api.PodReady) == api.ConditionTrue
	})
	if b, err := os.ReadFile(filepath.Join(hostDir, "poststart")); err != nil || string(b) != "sidecar-up\n" {
		t.Fatalf("postStart hook: %q %v (pod %s)", b, err, statusString(got))
	}
	sc := status(got, "container-redirect")
	if sc.State.Running == nil || sc.Started == nil || !*sc.Started || !sc.Ready {
		t.Fatalf("sidecar status: %s", statusString(got))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := nd.pods().Delete(ctx, "hooks", nil); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := nd.pods().Get(ctx, "hooks")
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("pod object was not deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if b, err := os.ReadFile(filepath.Join(hostDir, "prestop")); err != nil || string(b) != "sidecar-up\n" {
		t.Fatalf("preStop hook did not reach the sidecar: %q %v", b, err)
	}
	var killing []string
	for _, e := range nd.events("hooks") {
		if strings.HasPrefix(e, "Killing:") {
			killing = append(killing, e)
		}
	}
	if len(killing) != 2 || !strings.Contains(killing[0], "main") || !strings.Contains(killing[1], "container-redirect") {
		t.Errorf("Killing events %q: want main, then the sidecar", killing)
	}
}
