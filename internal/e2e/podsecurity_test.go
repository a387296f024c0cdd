package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// psNS is the namespace of the Pod Security scenario, enforcing the
// restricted profile.
const psNS = "e2e-podsecurity"

// restrictedPod satisfies the Pod Security Standards' restricted profile:
// non-root user 1000 and group 3000, the RuntimeDefault seccomp profile,
// no privilege escalation, every capability dropped and a read-only root
// file system (an emptyDir for scratch).
const restrictedPod = `apiVersion: v1
kind: Pod
metadata:
  name: restricted
  namespace: ` + psNS + `
spec:
  securityContext:
    runAsNonRoot: true
    runAsUser: 1000
    runAsGroup: 3000
    seccompProfile:
      type: RuntimeDefault
  containers:
  - name: main
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "exec sleep 86400"]
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities:
        drop: ["ALL"]
    volumeMounts:
    - name: scratch
      mountPath: /scratch
  volumes:
  - name: scratch
    emptyDir: {}
`

// privilegedPod breaks both the baseline and the restricted profile: a
// privileged container and the host's root file system mounted.
const privilegedPod = `apiVersion: v1
kind: Pod
metadata:
  name: privileged
  namespace: ` + psNS + `
spec:
  containers:
  - name: main
    image: minik8s/busybox:latest
    command: ["sh", "-c", "exec sleep 86400"]
    securityContext:
      privileged: true
    volumeMounts:
    - name: root
      mountPath: /host
  volumes:
  - name: root
    hostPath:
      path: /
`

// TestPodSecurity is issue 26's end-to-end proof of the Pod Security
// Standards on the compose cluster: in a namespace labelled
// pod-security.kubernetes.io/enforce=restricted a privileged pod that
// mounts the host's root is refused with the PodSecurity admission's
// reasons and never created, and a pod of the restricted profile runs,
// with its securityContext applied by the kubelet on a real node: `id`
// says 1000 and 3000, the bounding and effective capability sets are
// empty (NET_RAW gone with the rest), no_new_privs and a seccomp filter
// are on, and the root file system cannot be written while the emptyDir
// can.
func TestPodSecurity(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(ctx, "delete", "namespace", psNS, "--ignore-not-found", "--wait=false"); err != nil {
			t.Errorf("delete namespace %s: %v", psNS, err)
		}
		t.Logf("pod security scenario: %.1fs wall time", time.Since(start).Seconds())
	})
	kubectlApply := func(ctx context.Context, manifest string) (string, error) {
		return c.RunInput(ctx, []byte(manifest), filepath.Join(c.Root, "bin", "kubectl-lite"), "--kubeconfig", c.Kubeconfig, "apply", "-f", "-")
	}
	if _, err := kubectlApply(ctx, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+psNS+"\n  labels:\n    pod-security.kubernetes.io/enforce: restricted\n"); err != nil {
		t.Fatal(err)
	}

	// The privileged pod: refused by PodSecurity, for each of its two
	// reasons, as kube-apiserver words them (the restricted profile's
	// volume check stands in for the baseline's hostPath one;
	// TestPodSecurityAsKube compares whole messages with kube-apiserver's).
	within(t, ctx, time.Minute, "the privileged pod refused by PodSecurity", func(ctx context.Context) (bool, string, error) {
		_, err := kubectlApply(ctx, privilegedPod)
		if err == nil {
			return false, "", fmt.Errorf("the privileged pod was accepted in a namespace enforcing restricted")
		}
		msg := err.Error()
		if strings.Contains(msg, "serviceaccount") {
			return false, msg, Retry(err) // the namespace's default ServiceAccount is not there yet
		}
		for _, want := range []string{
			`Error from server (Forbidden)`,
			`pods "privileged" is forbidden: violates PodSecurity "restricted:latest"`,
			`privileged (container "main" must not set securityContext.privileged=true)`,
			`restricted volume types (volume "root" uses restricted volume type "hostPath")`,
		} {
			if !strings.Contains(msg, want) {
				return false, "", fmt.Errorf("refusal does not say %q: %s", want, msg)
			}
		}
		return true, "", nil
	})
	if out, err := c.Kubectl(ctx, "get", "pods", "-n", psNS, "-o", "name"); err != nil || strings.Contains(out, "privileged") {
		t.Errorf("after the refusal: pods %q, err %v; want no privileged pod", out, err)
	}

	// The restricted pod runs.
	if out, err := kubectlApply(ctx, restrictedPod); err != nil {
		t.Fatalf("the restricted pod was refused: %v (%s)", err, out)
	}
	within(t, ctx, 2*time.Minute, "the restricted pod Running", func(ctx context.Context) (bool, string, error) {
		var p api.Pod
		if err := c.KubectlJSON(ctx, &p, "get", "pod", "-n", psNS, "restricted"); err != nil {
			return false, "", Retry(err)
		}
		return p.Status.Phase == api.PodRunning, fmt.Sprintf("phase %s, conditions %v, containers %v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses), nil
	})
	out, err := c.Kubectl(ctx, "exec", "-n", psNS, "restricted", "--", "sh", "-c",
		`id -u; id -g; grep -E '^(CapBnd|CapEff|NoNewPrivs|Seccomp):' /proc/self/status; `+
			`touch /rootfs-write 2>/dev/null && echo root-writable || echo root-read-only; `+
			`touch /scratch/x && echo scratch-writable || echo scratch-read-only`)
	if err != nil {
		t.Fatalf("exec in the restricted pod: %v", err)
	}
	got := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("exec printed %d lines, want 8:\n%s", len(lines), out)
	}
	got["uid"], got["gid"] = lines[0], lines[1]
	for _, l := range lines[2:6] {
		k, v, _ := strings.Cut(l, ":")
		got[k] = strings.TrimSpace(v)
	}
	got["root"], got["scratch"] = lines[6], lines[7]
	capBnd, err := strconv.ParseUint(got["CapBnd"], 16, 64)
	if err != nil {
		t.Fatalf("CapBnd %q: %v", got["CapBnd"], err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"id -u (runAsUser)", got["uid"], "1000"},
		{"id -g (runAsGroup)", got["gid"], "3000"},
		{"NET_RAW (capability 13) in the bounding set", strconv.FormatBool(capBnd&(1<<13) != 0), "false"},
		{"bounding set (drop ALL)", got["CapBnd"], "0000000000000000"},
		{"effective set", got["CapEff"], "0000000000000000"},
		{"no_new_privs (allowPrivilegeEscalation: false)", got["NoNewPrivs"], "1"},
		{"seccomp mode (RuntimeDefault: 2, a filter)", got["Seccomp"], "2"},
		{"root file system", got["root"], "root-read-only"},
		{"emptyDir", got["scratch"], "scratch-writable"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
}
