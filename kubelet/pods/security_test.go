package pods

import (
	"reflect"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

func i64(v int64) *int64 { return &v }
func bl(v bool) *bool    { return &v }

// TestContainerSecurity checks the merge of the pod's and the container's
// securityContext into what the runtime is asked, field by field as
// kube's determineEffectiveSecurityContext.
func TestContainerSecurity(t *testing.T) {
	masked, ro := runtime.DefaultMaskedPaths(), runtime.DefaultReadonlyPaths()
	unconfined := runtime.SecurityProfile{Type: runtime.ProfileUnconfined}
	unmasked := api.UnmaskedProcMount
	strict := api.SupplementalGroupsPolicyStrict
	local := "profiles/audit.json"
	tests := []struct {
		name     string
		pod      *api.PodSecurityContext
		c        *api.SecurityContext
		imgUser  string
		want     runtime.Security
		rootDir  string
		noMasked bool
	}{
		{name: "nothing set: the image's root", want: runtime.Security{RunAsUser: i64(0), Seccomp: unconfined}},
		{name: "image uid with group: the uid alone", imgUser: "1001:1002", want: runtime.Security{RunAsUser: i64(1001), Seccomp: unconfined}},
		{name: "image user name", imgUser: "nobody", want: runtime.Security{RunAsUsername: "nobody", Seccomp: unconfined}},
		{
			name: "pod user and group, container user wins",
			pod:  &api.PodSecurityContext{RunAsUser: i64(1000), RunAsGroup: i64(3000)},
			c:    &api.SecurityContext{RunAsUser: i64(2000)}, imgUser: "nobody",
			want: runtime.Security{RunAsUser: i64(2000), RunAsGroup: i64(3000), Seccomp: unconfined},
		},
		{
			name: "pod user, no container context",
			pod:  &api.PodSecurityContext{RunAsUser: i64(1000)},
			want: runtime.Security{RunAsUser: i64(1000), Seccomp: unconfined},
		},
		{
			name: "fsGroup then supplementalGroups, Merge by default",
			pod:  &api.PodSecurityContext{FSGroup: i64(2000), SupplementalGroups: []int64{4000, 5000}},
			want: runtime.Security{RunAsUser: i64(0), SupplementalGroups: []int64{2000, 4000, 5000}, Seccomp: unconfined},
		},
		{
			name: "supplementalGroupsPolicy Strict",
			pod:  &api.PodSecurityContext{SupplementalGroups: []int64{4000}, SupplementalGroupsPolicy: &strict},
			want: runtime.Security{RunAsUser: i64(0), SupplementalGroups: []int64{4000}, StrictSupplementalGroups: true, Seccomp: unconfined},
		},
		{
			name: "capabilities, privilege escalation, read-only root",
			c: &api.SecurityContext{Capabilities: &api.Capabilities{Add: []api.Capability{"NET_ADMIN"}, Drop: []api.Capability{"ALL"}},
				AllowPrivilegeEscalation: bl(false), ReadOnlyRootFilesystem: bl(true)},
			want: runtime.Security{RunAsUser: i64(0), AddCapabilities: []string{"NET_ADMIN"}, DropCapabilities: []string{"ALL"},
				NoNewPrivs: true, ReadOnlyRootfs: true, Seccomp: unconfined},
		},
		{
			name: "allowPrivilegeEscalation true: no no_new_privs",
			c:    &api.SecurityContext{AllowPrivilegeEscalation: bl(true), Privileged: bl(true)},
			want: runtime.Security{RunAsUser: i64(0), Privileged: true, Seccomp: unconfined},
		},
		{
			name: "pod seccomp RuntimeDefault",
			pod:  &api.PodSecurityContext{SeccompProfile: &api.SeccompProfile{Type: "RuntimeDefault"}},
			want: runtime.Security{RunAsUser: i64(0), Seccomp: runtime.SecurityProfile{Type: runtime.ProfileRuntimeDefault}},
		},
		{
			name: "container seccomp Localhost wins over the pod's, under <root-dir>/seccomp",
			pod:  &api.PodSecurityContext{SeccompProfile: &api.SeccompProfile{Type: "RuntimeDefault"}},
			c:    &api.SecurityContext{SeccompProfile: &api.SeccompProfile{Type: "Localhost", LocalhostProfile: &local}},
			want: runtime.Security{RunAsUser: i64(0), Seccomp: runtime.SecurityProfile{Type: runtime.ProfileLocalhost, LocalhostRef: "/var/lib/kubelet/seccomp/profiles/audit.json"}},
		},
		{
			name: "container seccomp Unconfined wins over the pod's RuntimeDefault",
			pod:  &api.PodSecurityContext{SeccompProfile: &api.SeccompProfile{Type: "RuntimeDefault"}},
			c:    &api.SecurityContext{SeccompProfile: &api.SeccompProfile{Type: "Unconfined"}},
			want: runtime.Security{RunAsUser: i64(0), Seccomp: unconfined},
		},
		{
			name: "AppArmor: the container's over the pod's",
			pod:  &api.PodSecurityContext{AppArmorProfile: &api.AppArmorProfile{Type: api.AppArmorProfileTypeRuntimeDefault}},
			c:    &api.SecurityContext{AppArmorProfile: &api.AppArmorProfile{Type: api.AppArmorProfileTypeUnconfined}},
			want: runtime.Security{RunAsUser: i64(0), Seccomp: unconfined, AppArmor: runtime.SecurityProfile{Type: runtime.ProfileUnconfined}},
		},
		{
			name: "procMount Unmasked: nothing masked", noMasked: true,
			c:    &api.SecurityContext{ProcMount: &unmasked},
			want: runtime.Security{RunAsUser: i64(0), Seccomp: unconfined, MaskedPaths: []string{}, ReadonlyPaths: []string{}},
		},
	}
	m := &Manager{opts: Options{RootDir: "/var/lib/kubelet"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}}
			pod.Spec.SecurityContext = tc.pod
			c := &api.Container{Name: "c", SecurityContext: tc.c}
			got, err := m.containerSecurity(pod, c, tc.imgUser)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if !tc.noMasked {
				want.MaskedPaths, want.ReadonlyPaths = masked, ro
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestVerifyRunAsNonRoot checks kube's refusals, word for word.
func TestVerifyRunAsNonRoot(t *testing.T) {
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default", UID: "1234"}}
	tests := []struct {
		name    string
		pod     *api.PodSecurityContext
		c       *api.SecurityContext
		imgUser string
		want    string
	}{
		{name: "not asked", imgUser: ""},
		{name: "runAsNonRoot false", pod: &api.PodSecurityContext{RunAsNonRoot: bl(false)}},
		{name: "image root", pod: &api.PodSecurityContext{RunAsNonRoot: bl(true)},
			want: `container has runAsNonRoot and image will run as root (pod: "web_default(1234)", container: c)`},
		{name: "image uid 0 explicit", c: &api.SecurityContext{RunAsNonRoot: bl(true)}, imgUser: "0:0",
			want: `container has runAsNonRoot and image will run as root (pod: "web_default(1234)", container: c)`},
		{name: "image user name", pod: &api.PodSecurityContext{RunAsNonRoot: bl(true)}, imgUser: "nobody",
			want: `container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: "web_default(1234)", container: c)`},
		{name: "image uid 1000", pod: &api.PodSecurityContext{RunAsNonRoot: bl(true)}, imgUser: "1000"},
		{name: "runAsUser 0", pod: &api.PodSecurityContext{RunAsNonRoot: bl(true)}, c: &api.SecurityContext{RunAsUser: i64(0)},
			want: `container's runAsUser breaks non-root policy (pod: "web_default(1234)", container: c)`},
		{name: "runAsUser 1000 over a root image", pod: &api.PodSecurityContext{RunAsNonRoot: bl(true), RunAsUser: i64(1000)}},
		{name: "container turns it off", pod: &api.PodSecurityContext{RunAsNonRoot: bl(true)}, c: &api.SecurityContext{RunAsNonRoot: bl(false)}},
	}
	m := &Manager{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := *pod
			p.Spec.SecurityContext = tc.pod
			_, err := m.containerSecurity(&p, &api.Container{Name: "c", SecurityContext: tc.c}, tc.imgUser)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFakeRunAsNonRootRefused: a container whose image runs as root is
// not created when runAsNonRoot is set; its waiting reason and event are
// kube's.
func TestFakeRunAsNonRootRefused(t *testing.T) {
	pod := fakePod("nonroot", api.Container{Name: "main"})
	pod.Spec.SecurityContext = &api.PodSecurityContext{RunAsNonRoot: bl(true)}
	n := newFakeNode(t, nil, pod)
	p := n.waitPod("nonroot", "refused", func(p *api.Pod) bool {
		w := statusOf(p, "main").State.Waiting
		return w != nil && w.Reason == "CreateContainerConfigError"
	})
	want := `container has runAsNonRoot and image will run as root (pod: "nonroot_default(` + string(p.UID) + `)", container: main)`
	if msg := statusOf(p, "main").State.Waiting.Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	if !n.hasEvent("Warning Failed Error: " + want) {
		t.Errorf("no Failed event in %q", n.rec.Events())
	}
	for _, a := range n.rt.Actions() {
		if a == "CreateContainer nonroot/main" {
			t.Errorf("the container was created: %q", n.rt.Actions())
		}
	}
}

// TestFakeSecurityReachesRuntime: the runtime is asked for the merged
// security context, with the image's user when the pod sets none.
func TestFakeSecurityReachesRuntime(t *testing.T) {
	pod := fakePod("sec", api.Container{Name: "main", SecurityContext: &api.SecurityContext{
		RunAsGroup: i64(3000), AllowPrivilegeEscalation: bl(false),
		Capabilities: &api.Capabilities{Drop: []api.Capability{"NET_RAW"}}}})
	pod.Spec.SecurityContext = &api.PodSecurityContext{RunAsNonRoot: bl(true), FSGroup: i64(2000),
		SeccompProfile: &api.SeccompProfile{Type: "RuntimeDefault"}}
	n := newFakeNode(t, func(n *fakeNode) { n.rt.SetImageUser(fakeImage, "1000:1000") }, pod)
	n.waitPod("sec", "Running", isRunning)
	cfg, ok := n.rt.Config(n.rt.Running("sec", "main").ID)
	if !ok {
		t.Fatal("no recorded config")
	}
	want := runtime.Security{RunAsUser: i64(1000), RunAsGroup: i64(3000), SupplementalGroups: []int64{2000},
		DropCapabilities: []string{"NET_RAW"}, NoNewPrivs: true, Seccomp: runtime.SecurityProfile{Type: runtime.ProfileRuntimeDefault},
		MaskedPaths: runtime.DefaultMaskedPaths(), ReadonlyPaths: runtime.DefaultReadonlyPaths()}
	if !reflect.DeepEqual(cfg.Security, want) {
		t.Errorf("security %+v\nwant %+v", cfg.Security, want)
	}
}

// TestAdmitSysctls checks kube's sysctl admission and its messages.
func TestAdmitSysctls(t *testing.T) {
	tests := []struct {
		name             string
		sysctls          []api.Sysctl
		hostNet, hostIPC bool
		want             string
	}{
		{name: "none"},
		{name: "safe", sysctls: []api.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "20000 30000"}, {Name: "kernel.shm_rmid_forced", Value: "1"}}},
		{name: "slash-separated safe", sysctls: []api.Sysctl{{Name: "net/ipv4/tcp_syncookies", Value: "1"}}},
		{name: "unsafe", sysctls: []api.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "kernel.msgmax", Value: "1"}},
			want: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "node-wide", sysctls: []api.Sysctl{{Name: "vm/overcommit_memory", Value: "1"}},
			want: `forbidden sysctl: "vm.overcommit_memory" not allowlisted`},
		{name: "net with hostNetwork", hostNet: true, sysctls: []api.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}},
			want: `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled`},
		{name: "ipc with hostIPC", hostIPC: true, sysctls: []api.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}},
			want: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
		{name: "ipc with hostNetwork", hostNet: true, sysctls: []api.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &api.Pod{Spec: api.PodSpec{HostNetwork: tc.hostNet, HostIPC: tc.hostIPC,
				SecurityContext: &api.PodSecurityContext{Sysctls: tc.sysctls}}}
			if got := admitSysctls(pod); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFakeSysctlForbidden: a pod asking for an unsafe sysctl is rejected
// as kube rejects it: Failed, SysctlForbidden, no sandbox.
func TestFakeSysctlForbidden(t *testing.T) {
	pod := fakePod("tuned", api.Container{Name: "main"})
	pod.Spec.SecurityContext = &api.PodSecurityContext{Sysctls: []api.Sysctl{{Name: "kernel.msgmax", Value: "65536"}}}
	n := newFakeNode(t, nil, pod)
	p := n.waitPod("tuned", "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	want := `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted`
	if p.Status.Reason != "SysctlForbidden" || p.Status.Message != want {
		t.Errorf("reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if !n.hasEvent(`Warning SysctlForbidden forbidden sysctl: "kernel.msgmax" not allowlisted`) {
		t.Errorf("no SysctlForbidden event in %q", n.rec.Events())
	}
	time.Sleep(300 * time.Millisecond) // a few resyncs
	if a := n.rt.Actions(); len(a) != 0 {
		t.Errorf("runtime calls for a rejected pod: %q", a)
	}
	if p := n.pod("tuned"); p.Status.Reason != "SysctlForbidden" || len(p.Status.ContainerStatuses) != 0 {
		t.Errorf("status after resyncs: %+v", p.Status)
	}
}

// TestAdmitAppArmor checks kube's AppArmor admission.
func TestAdmitAppArmor(t *testing.T) {
	rd := &api.AppArmorProfile{Type: api.AppArmorProfileTypeRuntimeDefault}
	unconfined := &api.AppArmorProfile{Type: api.AppArmorProfileTypeUnconfined}
	const refused = "Cannot enforce AppArmor: AppArmor is not enabled on the host"
	tests := []struct {
		name    string
		pod     api.Pod
		enabled bool
		want    string
	}{
		{name: "nothing asked"},
		{name: "pod RuntimeDefault, no AppArmor", pod: api.Pod{Spec: api.PodSpec{SecurityContext: &api.PodSecurityContext{AppArmorProfile: rd}}}, want: refused},
		{name: "pod RuntimeDefault, AppArmor", enabled: true, pod: api.Pod{Spec: api.PodSpec{SecurityContext: &api.PodSecurityContext{AppArmorProfile: rd}}}},
		{name: "container Unconfined", pod: api.Pod{Spec: api.PodSpec{Containers: []api.Container{{SecurityContext: &api.SecurityContext{AppArmorProfile: unconfined}}}}}},
		{name: "init container RuntimeDefault", pod: api.Pod{Spec: api.PodSpec{InitContainers: []api.Container{{SecurityContext: &api.SecurityContext{AppArmorProfile: rd}}}}}, want: refused},
		{name: "deprecated annotation", pod: api.Pod{ObjectMeta: api.ObjectMeta{Annotations: map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "runtime/default"}}}, want: refused},
		{name: "running pod not re-checked", pod: api.Pod{Spec: api.PodSpec{SecurityContext: &api.PodSecurityContext{AppArmorProfile: rd}}, Status: api.PodStatus{Phase: api.PodRunning}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := admitAppArmor(&tc.pod, tc.enabled); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFakeAppArmorRejected: on a node without AppArmor a pod asking for a
// profile is rejected as kube rejects it.
func TestFakeAppArmorRejected(t *testing.T) {
	old := hostAppArmorEnabled
	hostAppArmorEnabled = func() bool { return false }
	t.Cleanup(func() { hostAppArmorEnabled = old })
	pod := fakePod("confined", api.Container{Name: "main"})
	pod.Spec.SecurityContext = &api.PodSecurityContext{AppArmorProfile: &api.AppArmorProfile{Type: api.AppArmorProfileTypeRuntimeDefault}}
	n := newFakeNode(t, nil, pod)
	p := n.waitPod("confined", "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	if p.Status.Reason != "AppArmor" || p.Status.Message != "Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host" {
		t.Errorf("reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if !n.hasEvent("Warning AppArmor Cannot enforce AppArmor: AppArmor is not enabled on the host") {
		t.Errorf("no AppArmor event in %q", n.rec.Events())
	}
}
