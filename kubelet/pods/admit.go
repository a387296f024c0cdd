package pods

import (
	"fmt"
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
// "Pod was rejected: " and the message. True: the pod may run.
func (s *podSync) admit() bool {
	w := s.w
	if w.rejected != nil {
		return false
	}
	if w.admitted {
		return true
	}
	msg := admitSysctls(s.pod)
	if msg == "" {
		w.admitted = true
		return true
	}
	s.log.Info("pod rejected", "reason", sysctlForbidden, "message", msg)
	s.m.rec.Event(s.pod, api.EventTypeWarning, sysctlForbidden, msg)
	w.rejected = &rejection{reason: sysctlForbidden, message: "Pod was rejected: " + msg}
	w.terminal = api.PodFailed
	return false
}

// rejection is why the kubelet refused to run a pod.
type rejection struct{ reason, message string }

// rejectedStatus is the status kube's rejectPod writes: Failed, with the
// reason and message, and nothing about containers.
func rejectedStatus(w *worker, pod *api.Pod) api.PodStatus {
	return api.PodStatus{Phase: api.PodFailed, Reason: w.rejected.reason, Message: w.rejected.message,
		QOSClass: api.ComputePodQOS(pod), StartTime: w.startTime, ObservedGeneration: pod.Generation}
}
