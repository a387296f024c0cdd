package pods_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
)

// TestResizeContainerd is the conformance spec "Pod InPlace Resize
// Container burstable pods - extended 6 containers - various operations
// performed (including adding limits and requests)" on a real containerd
// and apiserver: a strategic-merge patch of pods/resize adds, raises and
// lowers requests and limits; the kubelet applies them in place (no
// restart) and each container reads its new limits in its own
// /sys/fs/cgroup, as the spec checks them (cgroup v1 or v2), while the
// statuses report them and no resize condition is left.
func TestResizeContainerd(t *testing.T) {
	nd := newNode(t)
	q := resource.MustParse
	res := func(kv ...string) api.ResourceList {
		l := api.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[api.ResourceName(kv[i])] = q(kv[i+1])
		}
		return l
	}
	cmd := sh("grep Cpus_allowed_list /proc/self/status | cut -f2 && sleep 1d")
	p := nd.pod("resize",
		api.Container{Name: "c1", Command: cmd, Resources: api.ResourceRequirements{Requests: res("cpu", "20m")}},
		api.Container{Name: "c2", Command: cmd, Resources: api.ResourceRequirements{Requests: res("memory", "35Mi")}},
		api.Container{Name: "c3", Command: cmd, Resources: api.ResourceRequirements{Requests: res("cpu", "20m", "memory", "35Mi")}},
	)
	p.Spec.RestartPolicy = api.RestartPolicyOnFailure
	nd.create(p)
	p = nd.waitPod("resize", 60*time.Second, "Running", running)
	if s := status(p, "c1"); s.Resources == nil || s.Resources.Requests.Cpu().MilliValue() != 20 || s.AllocatedResources.Cpu().MilliValue() != 20 {
		t.Fatalf("c1 status before the resize: %+v", s)
	}
	v2 := false
	if out, _ := nd.exec(p, "c1", "sh", "-c", "mount -t cgroup2"); strings.Contains(out, "/sys/fs/cgroup") {
		v2 = true
	}
	// cgroup reads what the e2e framework reads (head -n 1 of the file).
	cgroup := func(container, v1file, v2file string) string {
		t.Helper()
		f := "/sys/fs/cgroup/" + v1file
		if v2 {
			f = "/sys/fs/cgroup/" + v2file
		}
		out, code := nd.exec(p, container, "head", "-n", "1", f)
		if code != 0 {
			t.Fatalf("%s: head %s: %d %q", container, f, code, out)
		}
		return strings.TrimSpace(out)
	}
	cpuMax := func(c string) string { return cgroup(c, "cpu/cpu.cfs_quota_us", "cpu.max") }
	memMax := func(c string) string { return cgroup(c, "memory/memory.limit_in_bytes", "memory.max") }
	weight := func(c string) int64 {
		w, err := strconv.ParseInt(cgroup(c, "cpu/cpu.shares", "cpu.weight"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	noLimit := "-1"
	if v2 {
		noLimit = "max 100000"
	}
	if got := cpuMax("c1"); got != noLimit {
		t.Errorf("c1 cpu limit before: %q, want %q", got, noLimit)
	}
	w1 := weight("c1")

	patch := `{"spec":{"containers":[` +
		`{"name":"c1","resources":{"requests":{"cpu":"25m"},"limits":{"cpu":"35m"}}},` +
		`{"name":"c2","resources":{"requests":{"memory":"30Mi"},"limits":{"memory":"50Mi"}}},` +
		`{"name":"c3","resources":{"requests":{"memory":"30Mi"}}}]}}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := nd.c.Do(ctx, client.Request{Method: "PATCH", Path: "/api/v1/namespaces/default/pods/resize/resize",
		Body: []byte(patch), ContentType: "application/strategic-merge-patch+json"})
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	if !strings.Contains(string(body), `"limits":{"cpu":"35m"}`) || !strings.Contains(string(body), `"generation":2`) {
		t.Errorf("resize answer: %s", body)
	}
	p = nd.waitPod("resize", 30*time.Second, "resized", func(p *api.Pod) bool {
		if p.Status.ObservedGeneration != p.Generation || !running(p) {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == api.PodResizePending || c.Type == api.PodResizeInProgress {
				return false
			}
		}
		s := status(p, "c2")
		return s.Resources != nil && s.Resources.Limits != nil
	})
	for _, c := range []string{"c1", "c2", "c3"} {
		if s := status(p, c); s.RestartCount != 0 {
			t.Errorf("%s restarted: %+v", c, s)
		}
	}
	s1 := status(p, "c1")
	if s1.Resources.Limits.Cpu().MilliValue() != 35 || s1.Resources.Requests.Cpu().MilliValue() != 25 || s1.AllocatedResources.Cpu().MilliValue() != 25 {
		t.Errorf("c1 status: %+v", s1)
	}
	s2 := status(p, "c2")
	if l := s2.Resources.Limits[api.ResourceMemory]; l.Value() != 50<<20 {
		t.Errorf("c2 status: %+v", s2)
	}
	wantCPU := "3500"
	if v2 {
		wantCPU = "3500 100000"
	}
	if got := cpuMax("c1"); got != wantCPU {
		t.Errorf("c1 cpu limit: %q, want %q", got, wantCPU)
	}
	if w := weight("c1"); w < w1 {
		t.Errorf("c1 cpu weight fell from %d to %d as its request rose", w1, w)
	}
	if got, want := memMax("c2"), fmt.Sprint(50<<20); got != want {
		t.Errorf("c2 memory limit: %q, want %q", got, want)
	}
	if got := cpuMax("c3"); got != noLimit {
		t.Errorf("c3 cpu limit: %q, want %q", got, noLimit)
	}
}
