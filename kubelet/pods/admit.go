package pods

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// safeSysctls are the sysctls kube's kubelet allows any pod to set: each
// is namespaced (the pod's network or IPC namespace) and cannot affect
// other pods or the node. Others would need --allowed-unsafe-sysctls,
// which minik8s' kubelet does not have.
var safeSysctls = map[string]string{
	"kernel.shm_rmid_forced":              "IPC",
	"net.ipv4.ip_local_port_range":        "Net",
	"net.ipv4.tcp_syncookies":             "Net",
	"net.ipv4.ping_group_range":           "Net",
	"net.ipv4.ip_unprivileged_port_start": "Net",
	"net.ipv4.ip_local_reserved_ports":    "Net",
	"net.ipv4.tcp_keepalive_time":         "Net",
	"net.ipv4.tcp_fin_timeout":            "Net",
	"net.ipv4.tcp_keepalive_intvl":        "Net",
	"net.ipv4.tcp_keepalive_probes":       "Net",
	"net.ipv4.tcp_rmem":                   "Net",
	"net.ipv4.tcp_wmem":                   "Net",
	"net.ipv4.tcp_slow_start_after_idle":  "Net",
	"net.ipv4.tcp_notsent_lowat":          "Net",
}

// sysctlForbidden is the reason of a pod the kubelet rejects for its
// sysctls.
const sysctlForbidden = "SysctlForbidden"

// admitSysctls is kube's sysctl admission: a pod may set only the safe
// sysctls, and not those of a namespace it shares with the node. It
// returns the rejection message ("" admits).
func admitSysctls(pod *api.Pod) string {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return ""
	}
	for _, s := range sc.Sysctls {
		name := normalizeSysctl(s.Name)
		ns, ok := safeSysctls[name]
		switch {
		case !ok:
			return fmt.Sprintf("forbidden sysctl: %q not allowlisted", name)
		case ns == "IPC" && pod.Spec.HostIPC, ns == "Net" && pod.Spec.HostNetwork:
			return fmt.Sprintf("forbidden sysctl: %q not allowed with host %s enabled", name, ns)
		}
	}
	return ""
}

// normalizeSysctl turns a slash-separated name ("net/ipv4/tcp_rmem") into
// the dotted one, as kube's NormalizeName: the first separator decides.
func normalizeSysctl(name string) string {
	i := strings.IndexAny(name, "./")
	if i == -1 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}

// podSysctls are the pod's sysctls by dotted name, for the runtime.
func podSysctls(pod *api.Pod) map[string]string {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return nil
	}
	out := make(map[string]string, len(sc.Sysctls))
	for _, s := range sc.Sysctls {
		out[normalizeSysctl(s.Name)] = s.Value
	}
	return out
}

// admit rejects, once, a pod the kubelet must not run, as kube's
// rejectPod: a Warning event with the reason, and the pod Failed with
// "Pod was rejected: " and the message (decideAdmission makes the
// decision in the node's order). True: the pod may run.
func (s *podSync) admit(ctx context.Context) bool {
	w := s.w
	if w.rejected != nil {
		return false
	}
	if w.admitted {
		return true
	}
	a, ok := s.m.decideAdmission(ctx, s.pod)
	if !ok {
		s.log.Info("waiting for the node before admitting the pod")
		s.after(retrySoon)
		return false
	}
	if a.rejected == nil {
		w.admitted = true
		return true
	}
	w.rejected = a.rejected
	w.terminal = api.PodFailed
	return false
}

// rejectedPrefix starts the message of a pod the kubelet refused.
const rejectedPrefix = "Pod was rejected: "

// rejection is why the kubelet refused to run a pod.
type rejection struct{ reason, message string }

// rejectedStatus is the status kube's rejectPod writes: Failed, with the
// reason and message, and nothing about containers.
func rejectedStatus(w *worker, pod *api.Pod) api.PodStatus {
	return api.PodStatus{Phase: api.PodFailed, Reason: w.rejected.reason, Message: w.rejected.message,
		QOSClass: api.ComputePodQOS(pod), StartTime: w.startTime, ObservedGeneration: pod.Generation}
}

// appArmorNotAdmitted is the reason of a pod rejected for AppArmor.
const appArmorNotAdmitted = "AppArmor"

// admitAppArmor is kube's AppArmor admission of a pending pod: a pod that
// asks for an AppArmor profile (other than Unconfined, in its fields or
// the deprecated annotations) cannot run on a node without AppArmor, and
// a Localhost profile needs a name. It returns the rejection message.
func admitAppArmor(pod *api.Pod, hostEnabled bool) string {
	if pod.Status.Phase != "" && pod.Status.Phase != api.PodPending {
		return ""
	}
	if !appArmorRequired(pod) {
		return ""
	}
	// (A Localhost profile without a name, which kube also refuses here,
	// does not pass the apiserver's validation.)
	if !hostEnabled {
		return "Cannot enforce AppArmor: AppArmor is not enabled on the host"
	}
	return ""
}

// appArmorRequired: some profile other than Unconfined is asked for.
func appArmorRequired(pod *api.Pod) bool {
	confined := func(p *api.AppArmorProfile) bool { return p != nil && p.Type != api.AppArmorProfileTypeUnconfined }
	if sc := pod.Spec.SecurityContext; sc != nil && confined(sc.AppArmorProfile) {
		return true
	}
	for _, c := range allContainers(pod) {
		if c.SecurityContext != nil && confined(c.SecurityContext.AppArmorProfile) {
			return true
		}
	}
	for k, v := range pod.Annotations {
		if strings.HasPrefix(k, "container.apparmor.security.beta.kubernetes.io/") {
			return v != "unconfined"
		}
	}
	return false
}

// allContainers are the pod's init, app and ephemeral containers.
func allContainers(pod *api.Pod) []*api.Container {
	var out []*api.Container
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		out = append(out, &pod.Spec.EphemeralContainers[i].Container)
	}
	return out
}

// hostAppArmorEnabled is runc's check that the node's kernel enforces
// AppArmor; a variable for tests.
var hostAppArmorEnabled = func() bool {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		return false
	}
	b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled")
	return err == nil && strings.HasPrefix(string(b), "Y")
}
