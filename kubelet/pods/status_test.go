package pods

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/fake"
)

func TestComputeStatusPhase(t *testing.T) {
	now := time.Now()
	sandbox := runtime.Container{ID: "sb", Kind: runtime.KindSandbox, State: runtime.StateRunning, PodIP: "10.244.1.5", CreatedAt: now}
	ctr := func(name string, init bool, state runtime.State, code int32, restarts int) runtime.Container {
		return runtime.Container{ID: name + "-" + string(rune('0'+restarts)), Kind: runtime.KindContainer, Name: name, Init: init,
			State: state, ExitCode: code, RestartCount: restarts, StartedAt: now, FinishedAt: now, Reason: map[bool]string{true: "Completed", false: "Error"}[code == 0]}
	}
	tests := []struct {
		name     string
		policy   api.RestartPolicy
		init     bool
		cs       []runtime.Container
		waiting  map[string]*api.ContainerStateWaiting
		phase    api.PodPhase
		ready    bool
		mainDesc string
	}{
		{name: "nothing yet", cs: nil, phase: api.PodPending, mainDesc: "waiting ContainerCreating"},
		{name: "running", cs: []runtime.Container{sandbox, ctr("main", false, runtime.StateRunning, 0, 0)}, phase: api.PodRunning, ready: true, mainDesc: "running"},
		{name: "crash loop stays Running", cs: []runtime.Container{sandbox, ctr("main", false, runtime.StateExited, 1, 2)},
			waiting: map[string]*api.ContainerStateWaiting{"main": {Reason: "CrashLoopBackOff"}}, phase: api.PodRunning, mainDesc: "waiting CrashLoopBackOff"},
		{name: "never, failed", policy: api.RestartPolicyNever, cs: []runtime.Container{sandbox, ctr("main", false, runtime.StateExited, 1, 0)}, phase: api.PodFailed, mainDesc: "terminated Error"},
		{name: "onfailure, succeeded", policy: api.RestartPolicyOnFailure, cs: []runtime.Container{sandbox, ctr("main", false, runtime.StateExited, 0, 0)}, phase: api.PodSucceeded, mainDesc: "terminated Completed"},
		{name: "image pull back-off", cs: []runtime.Container{sandbox},
			waiting: map[string]*api.ContainerStateWaiting{"main": {Reason: "ImagePullBackOff"}}, phase: api.PodPending, mainDesc: "waiting ImagePullBackOff"},
		{name: "init running", init: true, cs: []runtime.Container{sandbox, ctr("init", true, runtime.StateRunning, 0, 0)}, phase: api.PodPending, mainDesc: "waiting PodInitializing"},
		{name: "init failed, never", init: true, policy: api.RestartPolicyNever, cs: []runtime.Container{sandbox, ctr("init", true, runtime.StateExited, 1, 0)}, phase: api.PodFailed, mainDesc: "waiting PodInitializing"},
		{name: "init done", init: true, cs: []runtime.Container{sandbox, ctr("init", true, runtime.StateExited, 0, 0), ctr("main", false, runtime.StateRunning, 0, 0)}, phase: api.PodRunning, ready: true, mainDesc: "running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
				Spec: api.PodSpec{RestartPolicy: tt.policy, Containers: []api.Container{{Name: "main", Image: "img"}}}}
			if tt.policy == "" {
				pod.Spec.RestartPolicy = api.RestartPolicyAlways
			}
			if tt.init {
				pod.Spec.InitContainers = []api.Container{{Name: "init", Image: "img"}}
			}
			w := &worker{waiting: tt.waiting}
			if w.waiting == nil {
				w.waiting = map[string]*api.ContainerStateWaiting{}
			}
			m := &Manager{rt: fake.New(), opts: Options{NodeIP: "192.0.2.1"}}
			st := m.computeStatus(w, pod, tt.cs, nil)
			if st.Phase != tt.phase {
				t.Errorf("phase %s, want %s", st.Phase, tt.phase)
			}
			var ready api.ConditionStatus
			for _, c := range st.Conditions {
				if c.Type == api.PodReady {
					ready = c.Status
				}
			}
			if (ready == api.ConditionTrue) != tt.ready {
				t.Errorf("Ready %s, want %v", ready, tt.ready)
			}
			cs := st.ContainerStatuses[0]
			desc := ""
			switch {
			case cs.State.Waiting != nil:
				desc = "waiting " + cs.State.Waiting.Reason
			case cs.State.Running != nil:
				desc = "running"
			case cs.State.Terminated != nil:
				desc = "terminated " + cs.State.Terminated.Reason
			}
			if desc != tt.mainDesc {
				t.Errorf("main %q, want %q", desc, tt.mainDesc)
			}
			if len(tt.cs) > 0 && (st.PodIP != "10.244.1.5" || st.HostIP != "192.0.2.1") {
				t.Errorf("IPs %s %s", st.PodIP, st.HostIP)
			}
		})
	}
}

// A host-network pod's IP is the node's current address, not the one its
// sandbox recorded (a node that came back with another address); other
// pods keep their sandbox's IP.
func TestComputeStatusPodIP(t *testing.T) {
	sandbox := runtime.Container{ID: "sb", Kind: runtime.KindSandbox, State: runtime.StateRunning, PodIP: "192.0.2.1", CreatedAt: time.Now()}
	main := runtime.Container{ID: "main", Kind: runtime.KindContainer, Name: "main", State: runtime.StateRunning, StartedAt: time.Now()}
	for _, tt := range []struct {
		name        string
		hostNetwork bool
		sandboxIP   string
		want        string
	}{
		{"host network, node address changed", true, "192.0.2.1", "192.0.2.7"},
		{"pod network", false, "10.244.1.5", "10.244.1.5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
				Spec: api.PodSpec{HostNetwork: tt.hostNetwork, RestartPolicy: api.RestartPolicyAlways, Containers: []api.Container{{Name: "main", Image: "img"}}}}
			sb := sandbox
			sb.PodIP = tt.sandboxIP
			m := &Manager{rt: fake.New(), opts: Options{NodeIP: "192.0.2.7"}}
			w := &worker{waiting: map[string]*api.ContainerStateWaiting{}}
			st := m.computeStatus(w, pod, []runtime.Container{sb, main}, nil)
			if st.PodIP != tt.want || len(st.PodIPs) != 1 || st.PodIPs[0].IP != tt.want || st.HostIP != "192.0.2.7" {
				t.Errorf("podIP %s %v hostIP %s, want podIP %s", st.PodIP, st.PodIPs, st.HostIP, tt.want)
			}
		})
	}
}
