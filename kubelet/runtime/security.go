package runtime

import (
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
)

// ProfileType is how a seccomp or AppArmor profile is chosen, as in CRI's
// SecurityProfile.
type ProfileType string

// Profile types. The zero value means the pod asked for nothing: for
// AppArmor the runtime's default applies where the host has AppArmor.
const (
	ProfileUnconfined     ProfileType = "Unconfined"
	ProfileRuntimeDefault ProfileType = "RuntimeDefault"
	ProfileLocalhost      ProfileType = "Localhost"
)

// SecurityProfile is a seccomp or AppArmor profile. LocalhostRef is, for
// Localhost, the profile's file (seccomp, an absolute path on the node) or
// its name (AppArmor, a profile loaded on the node).
type SecurityProfile struct {
	Type         ProfileType
	LocalhostRef string
}

// Security is the Linux security of a container, what kube's kuberuntime
// hands a CRI runtime as a LinuxContainerSecurityContext: the pod manager
// computes it from the pod's and the container's securityContext (the
// container's fields win) and a driver applies it as containerd's CRI
// plugin does. The zero value is a root container with the runtime's
// default capabilities and no seccomp filter, masked paths or other
// restriction.
type Security struct {
	// RunAsUser is the uid; when nil, RunAsUsername (resolved in the
	// image's /etc/passwd) or else the image's USER applies.
	RunAsUser     *int64
	RunAsUsername string
	// RunAsGroup is the primary gid; when nil, the user's group from the
	// image's /etc/passwd (0 if the user is not there).
	RunAsGroup *int64
	// SupplementalGroups are the pod's fsGroup and supplementalGroups. The
	// groups the image's /etc/group gives the user are added too unless
	// StrictSupplementalGroups (supplementalGroupsPolicy Strict).
	SupplementalGroups       []int64
	StrictSupplementalGroups bool
	// Privileged gives every capability and device, no seccomp or AppArmor
	// confinement, no masked paths and a writable /sys.
	Privileged bool
	// AddCapabilities and DropCapabilities change the runtime's default
	// set, names without "CAP_" as kube writes them; "ALL" means every
	// capability.
	AddCapabilities, DropCapabilities []string
	ReadOnlyRootfs                    bool
	// NoNewPrivs sets no_new_privs (allowPrivilegeEscalation false).
	NoNewPrivs bool
	Seccomp    SecurityProfile
	AppArmor   SecurityProfile
	// MaskedPaths and ReadonlyPaths are /proc and /sys paths hidden or made
	// read-only (DefaultMaskedPaths and DefaultReadonlyPaths, none with
	// procMount Unmasked); a privileged container has none.
	MaskedPaths, ReadonlyPaths []string
}

// DefaultMaskedPaths are the paths kube masks in a container with the
// default procMount (the same as Docker's and containerd's): hardware and
// kernel details of the host, plus each CPU's thermal_throttle directory
// present on the node.
func DefaultMaskedPaths() []string {
	paths := []string{
		"/proc/asound",
		"/proc/acpi",
		"/proc/interrupts",
		"/proc/kcore",
		"/proc/keys",
		"/proc/latency_stats",
		"/proc/timer_list",
		"/proc/timer_stats",
		"/proc/sched_debug",
		"/proc/scsi",
		"/sys/firmware",
		"/sys/devices/virtual/powercap",
	}
	return append(paths, thermalThrottlePaths()...)
}

// DefaultReadonlyPaths are the paths kube makes read-only in a container
// with the default procMount.
func DefaultReadonlyPaths() []string {
	return []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
}

var thermalThrottlePaths = sync.OnceValue(func() []string {
	var out []string
	for _, cpu := range possibleCPUs() {
		p := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/thermal_throttle", cpu)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
})

// possibleCPUs reads /sys/devices/system/cpu/possible ("0-3,8"), falling
// back to the CPUs the process sees.
func possibleCPUs() []int {
	var cpus []int
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err == nil {
		for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			start, err1 := strconv.Atoi(lo)
			end := start
			var err2 error
			if isRange {
				end, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				cpus = nil
				break
			}
			for i := start; i <= end; i++ {
				cpus = append(cpus, i)
			}
		}
	}
	if len(cpus) == 0 {
		for i := range goruntime.NumCPU() {
			cpus = append(cpus, i)
		}
	}
	return cpus
}
