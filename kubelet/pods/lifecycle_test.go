package pods_test

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

func TestLivenessProbeRestarts(t *testing.T) { forEachDriver(t, testLivenessProbeRestarts) }

func testLivenessProbeRestarts(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	p := nd.pod("live", api.Container{Name: "main", Command: sh("touch /tmp/healthy; sleep 2; rm /tmp/healthy; sleep 600"),
		LivenessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
			PeriodSeconds: 1, FailureThreshold: 2, TimeoutSeconds: 2}})
	nd.create(p)
	got := nd.waitPod("live", 90*time.Second, "a restart by the liveness probe", func(p *api.Pod) bool {
		return status(p, "main").RestartCount >= 1 && status(p, "main").State.Running != nil
	})
	if lt := status(got, "main").LastTerminationState.Terminated; lt == nil || lt.ExitCode != 137 {
		t.Fatalf("lastState: %s", statusString(got))
	}
	nd.waitEvent("live", "Unhealthy: Liveness probe failed: cat: can't open '/tmp/healthy'", 5*time.Second)
	nd.waitEvent("live", "Killing: Container main failed liveness probe, will be restarted", 5*time.Second)
}

func TestReadinessProbeFlipsReady(t *testing.T) { forEachDriver(t, testReadinessProbeFlipsReady) }

func testReadinessProbeFlipsReady(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	p := nd.pod("ready", api.Container{Name: "main", Command: sh("sleep 600"),
		Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}},
		ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
			PeriodSeconds: 1, FailureThreshold: 1}},
		api.Container{Name: "web", Command: sh("mkdir -p /www; echo ok > /www/index.html; sleep 600"),
			Ports: []api.ContainerPort{{Name: "web", ContainerPort: 8081}},
			ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/index.html", Port: api.IntOrString{Type: api.String, StrVal: "web"}}},
				PeriodSeconds: 1, FailureThreshold: 1}},
		api.Container{Name: "tcp", Command: sh("sleep 600"),
			ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{TCPSocket: &api.TCPSocketAction{Port: api.IntOrString{Type: api.Int, IntVal: 9090}}},
				PeriodSeconds: 1, FailureThreshold: 1}})
	nd.create(p)
	got := nd.waitPod("ready", 60*time.Second, "Running", running)
	if condition(got, api.PodReady) != api.ConditionFalse || status(got, "main").Ready {
		t.Fatalf("ready before the probes pass: %s", statusString(got))
	}
	nd.exec(got, "main", "touch", "/tmp/ready")
	nd.exec(got, "web", "sh", "-c", "httpd -p 8081 -h /www")
	nd.exec(got, "tcp", "httpd", "-p", "9090", "-h", "/tmp")
	got = nd.waitPod("ready", 30*time.Second, "Ready", func(p *api.Pod) bool { return condition(p, api.PodReady) == api.ConditionTrue })
	for _, c := range []string{"main", "web", "tcp"} {
		if !status(got, c).Ready {
			t.Fatalf("%s not ready: %s", c, statusString(got))
		}
	}
	nd.exec(got, "main", "rm", "/tmp/ready")
	got = nd.waitPod("ready", 30*time.Second, "not Ready", func(p *api.Pod) bool { return condition(p, api.PodReady) == api.ConditionFalse })
	if status(got, "main").Ready || status(got, "main").RestartCount != 0 {
		t.Fatalf("after rm: %s", statusString(got))
	}
	nd.waitEvent("ready", "Unhealthy: Readiness probe failed:", 5*time.Second)
}

func TestGracefulDeletion(t *testing.T) { forEachDriver(t, testGracefulDeletion) }

func testGracefulDeletion(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	p := nd.pod("graceful", api.Container{Name: "main", Command: sh("trap 'echo got SIGTERM; term=1' TERM; echo started; while true; do [ -n \"$term\" ] && echo still running; sleep 0.2; done")})
	grace := int64(3)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p = nd.create(p)
	nd.waitPod("graceful", 60*time.Second, "Running", running)
	logPath := nd.logFile(p, "main", 0)
	nd.waitFile(logPath, "stdout F started\n", 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	if err := nd.pods().Delete(ctx, "graceful", nil); err != nil {
		t.Fatal(err)
	}
	nd.waitFile(logPath, "stdout F got SIGTERM\n", 10*time.Second)
	if el := time.Since(start); el >= time.Duration(grace)*time.Second {
		t.Fatalf("SIGTERM only after %s, not at the start of the %ds grace period", el, grace)
	}
	// SIGTERM did not end it: it keeps running until the SIGKILL.
	nd.waitFile(logPath, "stdout F still running\n", 2*time.Second)
	// The container ignores SIGTERM: only SIGKILL after the grace period
	// ends it, and then the kubelet deletes the pod object.
	for {
		_, err := nd.pods().Get(ctx, "graceful")
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("pod object was not deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if el := time.Since(start); el < time.Duration(grace)*time.Second {
		t.Fatalf("pod gone after %s, before the %ds grace period", el, grace)
	}
	cs, err := nd.runtime().ListPodContainers(ctx, string(p.UID))
	if err != nil || len(cs) != 0 {
		t.Fatalf("containers left: %v %v", cs, err)
	}
	// Its log directory went with it.
	if _, err := os.Stat(filepath.Dir(filepath.Dir(logPath))); !os.IsNotExist(err) {
		t.Errorf("the deleted pod's log directory %s: %v, want it removed", filepath.Dir(filepath.Dir(logPath)), err)
	}
	nd.waitEvent("graceful", "Killing: Stopping container main", 5*time.Second)
}

func TestKubeletRestartAdoptsContainers(t *testing.T) {
	forEachDriver(t, testKubeletRestartAdoptsContainers)
}

func testKubeletRestartAdoptsContainers(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	keep := nd.pod("keep", api.Container{Name: "main", Command: sh("if [ -f /data/once ]; then echo second; sleep 600; else touch /data/once; exit 1; fi"),
		VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: "/data"}}},
		api.Container{Name: "side", Command: sh("while true; do echo tick; sleep 1; done")})
	keep.Spec.Volumes = []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}}
	keep = nd.create(keep)
	gone := nd.create(nd.pod("gone", api.Container{Name: "main", Command: sh("sleep 600")}))
	before := nd.waitPod("keep", 60*time.Second, "Running after one restart", func(p *api.Pod) bool {
		return running(p) && status(p, "main").RestartCount == 1
	})
	nd.waitPod("gone", 60*time.Second, "Running", running)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ids := func(uid string) []string {
		cs, err := nd.runtime().ListPodContainers(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			if c.State == runtime.StateRunning {
				out = append(out, c.ID)
			}
		}
		slices.Sort(out)
		return out
	}
	runningBefore := ids(string(keep.UID))

	nd.kill()
	// While the kubelet is down, "gone" is force-deleted from the API.
	zero := int64(0)
	if err := nd.pods().Delete(ctx, "gone", &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	nd.start()

	// The orphan's containers are removed.
	for {
		cs, err := nd.runtime().ListPodContainers(ctx, string(gone.UID))
		if err == nil && len(cs) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("containers of the deleted pod left: %v", cs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The kept pod is untouched: same containers, same restart counts,
	// and its output still reaches the log after the re-attach.
	if after := ids(string(keep.UID)); !slices.Equal(after, runningBefore) {
		t.Fatalf("running containers changed: %v -> %v", runningBefore, after)
	}
	time.Sleep(3 * time.Second) // let the new kubelet sync and report
	after := nd.waitPod("keep", 30*time.Second, "Running", running)
	for _, c := range []string{"main", "side"} {
		b, a := status(before, c), status(after, c)
		if b.ContainerID != a.ContainerID || b.RestartCount != a.RestartCount {
			t.Fatalf("%s: before %s/%d after %s/%d", c, b.ContainerID, b.RestartCount, a.ContainerID, a.RestartCount)
		}
	}
	logPath := nd.logFile(keep, "side", 0)
	n := strings.Count(nd.waitFile(logPath, "tick", time.Second), "tick")
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(nd.waitFile(logPath, "tick", time.Second), "tick") < n+3 {
		if time.Now().After(deadline) {
			t.Fatal("log not growing after the kubelet restart")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestMissingImageBackOff(t *testing.T) {
	nd := newNode(t)
	// A loopback port where nothing listens: the pull fails at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	img := addr + "/missing/image:v1"
	nd.create(nd.pod("missing", api.Container{Name: "main", Image: img, ImagePullPolicy: api.PullIfNotPresent}))
	// ErrImagePull lasts only until the next sync turns it into the
	// back-off, so a status poll may never see it: its events prove it.
	got := nd.waitPod("missing", 60*time.Second, "ImagePullBackOff", func(p *api.Pod) bool {
		w := status(p, "main").State.Waiting
		return w != nil && w.Reason == "ImagePullBackOff"
	})
	if got.Status.Phase != api.PodPending || !strings.Contains(status(got, "main").State.Waiting.Message, `Back-off pulling image "`+img+`"`) {
		t.Fatalf("status: %s", statusString(got))
	}
	nd.waitEvent("missing", `Failed: Failed to pull image "`+img+`"`, 5*time.Second)
	nd.waitEvent("missing", "Failed: Error: ErrImagePull", 5*time.Second)
	nd.waitEvent("missing", "Failed: Error: ImagePullBackOff", 5*time.Second)
	nd.waitEvent("missing", `Pulling: Pulling image "`+img+`"`, 5*time.Second)
}

func TestPullFromLocalRegistry(t *testing.T) {
	img, err := testimage.Busybox()
	if err != nil {
		t.Skip(err)
	}
	reg := httptest.NewServer(&testimage.Registry{Image: img, Tags: map[string]bool{"v1": true}})
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	nd := newNode(t, func(nd *node) { nd.insecure = []string{host} })
	ref := host + "/test/busybox:v1"
	// Always pulls even though the image is absent before.
	nd.create(nd.pod("pulled", api.Container{Name: "main", Image: ref, ImagePullPolicy: api.PullAlways, Command: sh("echo pulled; sleep 600")}))
	got := nd.waitPod("pulled", 60*time.Second, "Running", running)
	if id := status(got, "main").ImageID; id != host+"/test/busybox@"+img.Manifest.Digest.String() {
		t.Fatalf("imageID %q", id)
	}
	nd.waitEvent("pulled", `Pulling: Pulling image "`+ref+`"`, 5*time.Second)
	nd.waitEvent("pulled", `Pulled: Successfully pulled image "`+ref+`" in `, 5*time.Second)
}

func TestStartupProbeHostPathPullNever(t *testing.T) {
	nd := newNode(t)
	hostDir := filepath.Join(t.TempDir(), "host", "data")
	dirOrCreate := api.HostPathDirectoryOrCreate
	p := nd.pod("startup", api.Container{Name: "main", Command: sh("echo from-pod > /host/out; sleep 600"),
		VolumeMounts: []api.VolumeMount{{Name: "host", MountPath: "/host"}},
		// Liveness would fail at once, but it waits for the startup probe.
		StartupProbe: &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"cat", "/tmp/started"}}},
			PeriodSeconds: 1, FailureThreshold: 60},
		LivenessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"cat", "/tmp/live"}}},
			PeriodSeconds: 1, FailureThreshold: 1}})
	p.Spec.Volumes = []api.Volume{{Name: "host", VolumeSource: api.VolumeSource{HostPath: &api.HostPathVolumeSource{Path: hostDir, Type: &dirOrCreate}}}}
	nd.create(p)
	never := nd.pod("never-pull", api.Container{Name: "main", Image: "example.invalid/absent:v1", ImagePullPolicy: api.PullNever})
	nd.create(never)

	got := nd.waitPod("startup", 60*time.Second, "Running", running)
	if b := nd.waitFile(filepath.Join(hostDir, "out"), "from-pod", 10*time.Second); b != "from-pod\n" {
		t.Fatalf("hostPath file %q", b)
	}
	// Several liveness periods pass while the startup probe fails: no
	// restart, not started, not ready.
	time.Sleep(4 * time.Second)
	got = nd.waitPod("startup", 5*time.Second, "status", func(*api.Pod) bool { return true })
	cs := status(got, "main")
	if cs.RestartCount != 0 || cs.Started == nil || *cs.Started || cs.Ready {
		t.Fatalf("before the startup probe passes: started=%v %s", cs.Started, statusString(got))
	}
	nd.exec(got, "main", "touch", "/tmp/started")
	// Started, then the liveness probe runs, fails and restarts it.
	nd.waitPod("startup", 30*time.Second, "started", func(p *api.Pod) bool {
		cs := status(p, "main")
		return (cs.Started != nil && *cs.Started) || cs.RestartCount > 0
	})
	nd.waitPod("startup", 30*time.Second, "a liveness restart", func(p *api.Pod) bool { return status(p, "main").RestartCount >= 1 })
	nd.waitEvent("startup", "Unhealthy: Startup probe failed:", 5*time.Second)
	nd.waitEvent("startup", "Killing: Container main failed liveness probe, will be restarted", 5*time.Second)

	got = nd.waitPod("never-pull", 30*time.Second, "ErrImageNeverPull", func(p *api.Pod) bool {
		w := status(p, "main").State.Waiting
		return w != nil && w.Reason == "ErrImageNeverPull"
	})
	if got.Status.Phase != api.PodPending {
		t.Fatalf("never-pull: %s", statusString(got))
	}
}
