package pods_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	rtcontainerd "github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

func TestPodRunsAndLogs(t *testing.T) { forEachDriver(t, testPodRunsAndLogs) }

func testPodRunsAndLogs(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	p := nd.create(nd.pod("hello", api.Container{Name: "main", Command: sh("echo hello world; echo oops >&2; printf partial; sleep 600")}))
	got := nd.waitPod("hello", 60*time.Second, "Running", running)
	cs := status(got, "main")
	if !strings.HasPrefix(cs.ContainerID, "containerd://") || cs.ImageID == "" || !cs.Ready || cs.Started == nil || !*cs.Started {
		t.Fatalf("container status %+v", cs)
	}
	if got.Status.PodIP == "" || !strings.HasPrefix(got.Status.PodIP, strings.TrimSuffix(nd.cidr, "0/24")) || got.Status.HostIP != "127.0.0.1" || got.Status.StartTime == nil {
		t.Fatalf("status: %s hostIP=%s", statusString(got), got.Status.HostIP)
	}
	for _, c := range []api.PodConditionType{api.PodInitialized, api.ContainersReady, api.PodReady} {
		if condition(got, c) != api.ConditionTrue {
			t.Fatalf("condition %s: %s", c, statusString(got))
		}
	}
	log := nd.waitFile(nd.logFile(p, "main", 0), " stdout F hello world\n", 20*time.Second)
	if !strings.Contains(log, " stderr F oops\n") {
		t.Fatalf("log: %q", log)
	}
	nd.waitEvent("hello", "Started: Started container main", 20*time.Second)
	nd.waitEvent("hello", `Pulled: Container image "`+testimage.Ref+`" already present on machine`, 5*time.Second)
	nd.waitEvent("hello", "Created: Created container: main", 5*time.Second)
}

func TestPodNetworkVolumesLimits(t *testing.T) { forEachDriver(t, testPodNetworkVolumesLimits) }

func testPodNetworkVolumesLimits(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"}, Data: map[string]string{"index.html": "hello from configmap\n"}}
	if _, err := client.Resource[api.ConfigMap](nd.c).Namespace("default").Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	p := nd.pod("web",
		api.Container{Name: "server", Command: sh("httpd -f -p 8080 -h /www"),
			VolumeMounts: []api.VolumeMount{{Name: "www", MountPath: "/www"}, {Name: "shared", MountPath: "/shared"}},
			Resources: api.ResourceRequirements{
				Limits:   api.ResourceList{api.ResourceCPU: resource.MustParse("500m"), api.ResourceMemory: resource.MustParse("64Mi")},
				Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("250m"), api.ResourceMemory: resource.MustParse("32Mi")},
			}},
		api.Container{Name: "client", Command: sh("echo $MY_POD_NAME/$MY_NS/$MY_IP > /shared/env; sleep 600"),
			VolumeMounts: []api.VolumeMount{{Name: "shared", MountPath: "/shared"}},
			Env: []api.EnvVar{
				{Name: "MY_POD_NAME", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "MY_NS", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				{Name: "MY_IP", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			}},
	)
	p.Spec.Volumes = []api.Volume{
		{Name: "www", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "web"}}}},
		{Name: "shared", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
	}
	p = nd.create(p)
	got := nd.waitPod("web", 60*time.Second, "Running", running)

	// The two containers share localhost.
	var out string
	var code int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if out, code = nd.exec(got, "client", "wget", "-q", "-O-", "http://localhost:8080/index.html"); code == 0 {
			break
		}
	}
	if code != 0 || out != "hello from configmap\n" {
		t.Fatalf("localhost from the second container: code %d out %q", code, out)
	}
	// The pod is reachable on its IP from the node.
	resp, err := http.Get("http://" + got.Status.PodIP + ":8080/index.html")
	if err != nil {
		t.Fatalf("pod IP from the host: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from configmap\n" {
		t.Fatalf("pod IP body %q", body)
	}
	// emptyDir shared between containers, env from fieldRef.
	if out, _ := nd.exec(got, "server", "cat", "/shared/env"); out != "web/default/"+got.Status.PodIP+"\n" {
		t.Fatalf("env via emptyDir: %q", out)
	}
	// Hostname and DNS configuration.
	if out, _ := nd.exec(got, "server", "hostname"); out != "web\n" {
		t.Fatalf("hostname %q", out)
	}
	resolv, _ := nd.exec(got, "client", "cat", "/etc/resolv.conf")
	if !strings.Contains(resolv, "nameserver 10.96.0.10") || !strings.Contains(resolv, "search default.svc.cluster.local svc.cluster.local cluster.local") || !strings.Contains(resolv, "options ndots:5") {
		t.Fatalf("resolv.conf %q", resolv)
	}
	if hosts, _ := nd.exec(got, "client", "cat", "/etc/hosts"); !strings.Contains(hosts, got.Status.PodIP+"\tweb\n") {
		t.Fatalf("hosts %q", hosts)
	}
	// Limits in the container's cgroup.
	id := strings.TrimPrefix(status(got, "server").ContainerID, "containerd://")
	cg := rtcontainerd.CgroupPath("/"+nd.ns, string(p.UID), id)
	for file, want := range map[string]string{
		"cpu/cpu.cfs_quota_us":         "50000",
		"cpu/cpu.cfs_period_us":        "100000",
		"cpu/cpu.shares":               "256",
		"memory/memory.limit_in_bytes": fmt.Sprint(64 << 20),
	} {
		sub, name, _ := strings.Cut(file, "/")
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", sub, cg, name))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s: %q %v, want %s", file, b, err, want)
		}
	}
	if got.Status.QOSClass != api.PodQOSBurstable {
		t.Errorf("qosClass %s", got.Status.QOSClass)
	}
}

func TestCrashLoopBackOff(t *testing.T) { forEachDriver(t, testCrashLoopBackOff) }

func testCrashLoopBackOff(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	p := nd.pod("crash", api.Container{Name: "main", Command: sh("echo crashing; exit 3")})
	p = nd.create(p)
	// Back-off bounds are 1 s doubling to 4 s: the waiting messages show
	// the growing delays.
	seen := map[string]bool{}
	// When each restart count was first seen: the restarts come at
	// growing intervals, not only with growing messages.
	restartSeen := map[int32]time.Time{}
	var last *api.Pod
	nd.waitPod("crash", 90*time.Second, "back-off to reach 4s", func(p *api.Pod) bool {
		last = p
		cs := status(p, "main")
		if _, ok := restartSeen[cs.RestartCount]; !ok {
			restartSeen[cs.RestartCount] = time.Now()
		}
		if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
			for _, d := range []string{"1s", "2s", "4s"} {
				if strings.HasPrefix(w.Message, "back-off "+d+" restarting failed container=main pod=crash_default(") {
					seen[d] = true
				}
			}
			if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 3 || cs.LastTerminationState.Terminated.Reason != "Error" {
				t.Errorf("lastState %+v", cs.LastTerminationState)
			}
		}
		return seen["4s"]
	})
	if !seen["1s"] && !seen["2s"] {
		t.Errorf("no shorter back-off seen before 4s: %v", seen)
	}
	last = nd.waitPod("crash", 30*time.Second, "restart count 4", func(p *api.Pod) bool {
		rc := status(p, "main").RestartCount
		if _, ok := restartSeen[rc]; !ok {
			restartSeen[rc] = time.Now()
		}
		return rc >= 4 && status(p, "main").State.Waiting != nil
	})
	// As in kube, the first restart is immediate; then each waits the
	// current back-off: 1 -> 2 after 1s, 2 -> 3 after 2s, 3 -> 4 after 4s
	// (plus the container's short run and the status write). Polls may
	// miss a count on a loaded machine: compare the first and last counts
	// seen with the back-offs between them.
	first, lastRC := int32(0), int32(0)
	for rc := range restartSeen {
		if rc >= 1 && (first == 0 || rc < first) {
			first = rc
		}
		lastRC = max(lastRC, rc)
	}
	if first == 0 || lastRC-first < 2 {
		t.Fatalf("restart counts seen %v: want at least two restarts apart", restartSeen)
	}
	var want time.Duration
	for rc := first; rc < lastRC; rc++ {
		want += min(time.Second<<(rc-1), 4*time.Second)
	}
	if got := restartSeen[lastRC].Sub(restartSeen[first]); got < want*85/100 {
		t.Errorf("restart %d to %d took %s: want at least the back-offs between them, %s", first, lastRC, got, want)
	} else {
		t.Logf("restart %d to %d took %s (back-offs %s)", first, lastRC, got, want)
	}
	if last.Status.Phase != api.PodRunning || condition(last, api.PodReady) != api.ConditionFalse {
		t.Errorf("phase/ready: %s", statusString(last))
	}
	nd.waitEvent("crash", "BackOff: Back-off restarting failed container main in pod crash_default(", 5*time.Second)
	// Each attempt has its own log file.
	nd.waitFile(nd.logFile(p, "main", 1), "stdout F crashing\n", 5*time.Second)
}

func TestRestartPolicyNeverAndOnFailure(t *testing.T) {
	forEachDriver(t, testRestartPolicyNeverAndOnFailure)
}

func testRestartPolicyNeverAndOnFailure(t *testing.T, driver func(*node)) {
	nd := newNode(t, driver)
	never := nd.pod("never", api.Container{Name: "main", Command: sh("exit 2")})
	never.Spec.RestartPolicy = api.RestartPolicyNever
	nd.create(never)
	onf := nd.pod("onfailure", api.Container{Name: "main", Command: sh("exit 0")})
	onf.Spec.RestartPolicy = api.RestartPolicyOnFailure
	onf.Spec.InitContainers = []api.Container{{Name: "init", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent, Command: sh("echo init done")}}
	nd.create(onf)
	got := nd.waitPod("never", 60*time.Second, "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	if t0 := status(got, "main").State.Terminated; t0 == nil || t0.ExitCode != 2 || t0.Reason != "Error" || status(got, "main").RestartCount != 0 {
		t.Fatalf("never: %s", statusString(got))
	}
	got = nd.waitPod("onfailure", 60*time.Second, "Succeeded", func(p *api.Pod) bool { return p.Status.Phase == api.PodSucceeded })
	if t0 := status(got, "main").State.Terminated; t0 == nil || t0.Reason != "Completed" {
		t.Fatalf("onfailure: %s", statusString(got))
	}
	if t0 := status(got, "init").State.Terminated; t0 == nil || t0.Reason != "Completed" || condition(got, api.PodInitialized) != api.ConditionTrue {
		t.Fatalf("init: %s", statusString(got))
	}
}

// TestPodStatusWrittenOnlyOnChange: once a pod is Running and Ready,
// resyncs (every 2s here) write nothing until something changes.
func TestPodStatusWrittenOnlyOnChange(t *testing.T) {
	nd := newNode(t)
	nd.create(nd.pod("steady", api.Container{Name: "main", Command: sh("until [ -f /tmp/stop ]; do sleep 0.2; done; exit 1")}))
	got := nd.waitPod("steady", 60*time.Second, "Ready", func(p *api.Pod) bool {
		return running(p) && condition(p, api.PodReady) == api.ConditionTrue
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := nd.pods().Watch(ctx, client.ListOptions{FieldSelector: "metadata.name=steady", ResourceVersion: got.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	quiet := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			t.Fatalf("status rewritten without a change: %s %s", ev.Type, statusString(ev.Object))
		case <-quiet:
			done = true
		}
	}
	// A change (the container exits) is written.
	nd.exec(got, "main", "touch", "/tmp/stop")
	select {
	case ev := <-w.ResultChan():
		if ev.Type != "MODIFIED" {
			t.Fatalf("event %s", ev.Type)
		}
	case <-ctx.Done():
		t.Fatal("no status write after the container exited")
	}
}
