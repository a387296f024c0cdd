package cri

import (
	"testing"

	"github.com/minik8s/minik8s/kubelet/runtime"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestGRPCTarget(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///run/containerd/containerd.sock": "unix:///run/containerd/containerd.sock",
		"/var/run/crio/crio.sock":                "unix:///var/run/crio/crio.sock",
		"tcp://127.0.0.1:1234":                   "",
		"relative.sock":                          "",
	} {
		got, err := grpcTarget(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("grpcTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestToSecurity(t *testing.T) {
	uid, gid := int64(1000), int64(2000)
	ns := &criapi.NamespaceOption{Network: criapi.NamespaceMode_NODE}
	sc := toSecurity(runtime.Security{RunAsUser: &uid, RunAsGroup: &gid, SupplementalGroups: []int64{5}, StrictSupplementalGroups: true,
		AddCapabilities: []string{"NET_ADMIN"}, DropCapabilities: []string{"ALL"}, ReadOnlyRootfs: true, NoNewPrivs: true,
		Seccomp: runtime.SecurityProfile{Type: runtime.ProfileLocalhost, LocalhostRef: "/p.json"}, MaskedPaths: []string{"/proc/kcore"}}, ns)
	if sc.RunAsUser.GetValue() != 1000 || sc.RunAsGroup.GetValue() != 2000 || sc.SupplementalGroupsPolicy != criapi.SupplementalGroupsPolicy_Strict ||
		sc.Capabilities.AddCapabilities[0] != "NET_ADMIN" || sc.Capabilities.DropCapabilities[0] != "ALL" || !sc.ReadonlyRootfs || !sc.NoNewPrivs ||
		sc.Seccomp.ProfileType != criapi.SecurityProfile_Localhost || sc.Seccomp.LocalhostRef != "/p.json" || sc.Apparmor != nil ||
		sc.MaskedPaths[0] != "/proc/kcore" || sc.NamespaceOptions != ns {
		t.Fatalf("toSecurity = %+v", sc)
	}
	// Nothing asked: no seccomp filter (kube's Unconfined), the runtime's
	// AppArmor default, the runtime's capabilities.
	sc = toSecurity(runtime.Security{}, ns)
	if sc.Seccomp.GetProfileType() != criapi.SecurityProfile_Unconfined || sc.Apparmor != nil || sc.Capabilities != nil || sc.RunAsUser != nil {
		t.Fatalf("zero toSecurity = %+v", sc)
	}
}

func TestImageID(t *testing.T) {
	img := &criapi.Image{Id: "sha256:cfg", RepoDigests: []string{"docker.io/library/other@sha256:1", "docker.io/library/busybox@sha256:2"}}
	if got := imageID("docker.io/library/busybox:1.36", img); got != "docker.io/library/busybox@sha256:2" {
		t.Errorf("imageID = %q, want busybox's repo digest", got)
	}
	if got := imageID("minik8s.local/x:1", &criapi.Image{Id: "sha256:cfg"}); got != "sha256:cfg" {
		t.Errorf("imageID without digests = %q, want the image ID", got)
	}
}

func TestSandboxConfigLayout(t *testing.T) {
	r := &Runtime{cfg: Config{PodLogsDir: "/var/log/pods", CgroupParent: "/minik8s", Owner: "o"}}
	podLabels := map[string]string{"app": "web", LabelPodName: "forged"}
	sc := r.sandboxConfig("u1", "ns", "web", 2, true, podLabels, map[string]string{"note": "x"})
	if sc.LogDirectory != "/var/log/pods/ns_web_u1" || sc.Linux.CgroupParent != "/minik8s/podu1" || sc.Metadata.Attempt != 2 ||
		sc.Labels[LabelPodUID] != "u1" || sc.Labels[LabelPodName] != "web" || sc.Labels[LabelPodNamespace] != "ns" || sc.Labels[LabelOwner] != "o" ||
		sc.Labels["app"] != "web" || sc.Annotations["note"] != "x" ||
		sc.Linux.SecurityContext.NamespaceOptions.Network != criapi.NamespaceMode_NODE {
		t.Fatalf("sandbox config %+v", sc)
	}
	if podLabels[LabelPodName] != "forged" {
		t.Errorf("the pod's labels were changed: %v", podLabels)
	}
}
