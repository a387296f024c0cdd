package pods_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// A pod's securityContext reaches its container on a real containerd:
// the user and groups (fsGroup and supplementalGroups added), dropped
// capabilities, no_new_privs, the RuntimeDefault seccomp filter and a
// read-only root; its emptyDir and secret volumes belong to the fsGroup,
// so the non-root user reads a 0400 secret through the group. A second
// pod with runAsNonRoot and an image running as root is refused as kube
// refuses it.
func TestSecurityContextApplied(t *testing.T) {
	nd := newNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.Resource[api.Secret](nd.c).Namespace("default").Create(ctx, &api.Secret{
		ObjectMeta: api.ObjectMeta{Name: "creds", Namespace: "default"}, Data: map[string][]byte{"key": []byte("s3cret")}}); err != nil {
		t.Fatal(err)
	}
	uid, gid, fsGroup := int64(1000), int64(3000), int64(2000)
	no, yes := false, true
	mode := int32(0o400)
	p := nd.pod("secure", api.Container{Name: "main", Command: sh("sleep 3600"),
		SecurityContext: &api.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
			Capabilities: &api.Capabilities{Drop: []api.Capability{"NET_RAW"}}},
		VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}, {Name: "creds", MountPath: "/creds"}}})
	p.Spec.SecurityContext = &api.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &gid, FSGroup: &fsGroup,
		SupplementalGroups: []int64{4000}, SeccompProfile: &api.SeccompProfile{Type: "RuntimeDefault"}}
	p.Spec.Volumes = []api.Volume{
		{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
		{Name: "creds", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "creds", DefaultMode: &mode}}},
	}
	p = nd.create(p)
	p = nd.waitPod("secure", 60*time.Second, "Running", running)

	out, code := nd.exec(p, "main", sh(`id -u; id -G; `+
		`sed -n 's/^CapBnd:[[:space:]]*//p;s/^NoNewPrivs:[[:space:]]*//p;s/^Seccomp:[[:space:]]*//p' /proc/self/status; `+
		`touch /x 2>/dev/null && echo root-writable || echo root-read-only; `+
		`stat -c '%g %a' /scratch; touch /scratch/f && stat -c '%u %g' /scratch/f; `+
		`cat /creds/key; echo; stat -L -c '%g %a' /creds/key`)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 10 {
		t.Fatalf("exec: code %d, output %q", code, out)
	}
	// A non-root user has no effective capabilities: the bounding set
	// shows what the container may ever have.
	capBnd, err := strconv.ParseUint(lines[2], 16, 64)
	if err != nil || capBnd == 0 {
		t.Fatalf("CapBnd %q", lines[2])
	}
	checks := []struct{ what, got, want string }{
		{"uid", lines[0], "1000"},
		{"groups (runAsGroup, fsGroup, supplementalGroups)", lines[1], "3000 2000 4000"},
		{"NET_RAW dropped from the bounding set", strconv.FormatBool(capBnd&(1<<13) == 0), "true"},
		{"NoNewPrivs", lines[3], "1"},
		{"Seccomp", lines[4], "2"},
		{"readOnlyRootFilesystem", lines[5], "root-read-only"},
		{"emptyDir group and mode", lines[6], "2000 2777"},
		{"a new file in the emptyDir", lines[7], "1000 2000"},
		{"the 0400 secret read through fsGroup", lines[8], "s3cret"},
		{"secret file group and mode", lines[9], "2000 440"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}

	refused := nd.pod("nonroot", api.Container{Name: "main", Command: sh("sleep 3600")})
	refused.Spec.SecurityContext = &api.PodSecurityContext{RunAsNonRoot: &yes}
	refused = nd.create(refused)
	got := nd.waitPod("nonroot", 30*time.Second, "CreateContainerConfigError", func(p *api.Pod) bool {
		w := status(p, "main").State.Waiting
		return w != nil && w.Reason == "CreateContainerConfigError"
	})
	want := `container has runAsNonRoot and image will run as root (pod: "nonroot_default(` + string(refused.UID) + `)", container: main)`
	if msg := status(got, "main").State.Waiting.Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
}

// A pod's safe sysctls are set in its network and IPC namespaces, and
// only there: the node keeps its own values. Both sandbox kinds: a bare
// network namespace (each container sets them) and a pause container
// (which holds them for the pod).
func TestSysctlsApplied(t *testing.T) {
	t.Run("netns sandbox", func(t *testing.T) { testSysctls(t, newNode(t)) })
	t.Run("pause sandbox", func(t *testing.T) {
		testSysctls(t, newNode(t, func(nd *node) { nd.sandboxImage = testimage.Ref }))
	})
}

func testSysctls(t *testing.T, nd *node) {
	host, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	p := nd.pod("tuned", api.Container{Name: "main", Command: sh("sleep 3600")})
	p.Spec.SecurityContext = &api.PodSecurityContext{Sysctls: []api.Sysctl{
		{Name: "net.ipv4.ip_local_port_range", Value: "20000 30000"}, {Name: "kernel/shm_rmid_forced", Value: "1"}}}
	p = nd.create(p)
	p = nd.waitPod("tuned", 60*time.Second, "Running", running)
	out, code := nd.exec(p, "main", sh("cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/kernel/shm_rmid_forced")...)
	if code != 0 || strings.Fields(out)[0] != "20000" || strings.Fields(out)[1] != "30000" || strings.Fields(out)[2] != "1" {
		t.Errorf("in the pod: code %d %q", code, out)
	}
	if now, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); string(now) != string(host) {
		t.Errorf("the node's ip_local_port_range changed: %q, was %q", now, host)
	}
}
