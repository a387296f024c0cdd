package runtime

import (
	"errors"
	"fmt"
	"time"
)

// Container kinds (Container.Kind), as in containerd's CRI plugin.
const (
	KindSandbox   = "sandbox"
	KindContainer = "container"
	// SandboxName is the container name a sandbox reports.
	SandboxName = "POD"
)

// ErrNotAttachable is wrapped by Attacher.Attach when the container has no
// running process whose streams the driver holds.
var ErrNotAttachable = errors.New("container is not running")

// State is the coarse state of a container.
type State string

// Container states.
const (
	StateCreated State = "created"
	StateRunning State = "running"
	StateExited  State = "exited"
	StateUnknown State = "unknown"
)

// Container is what the runtime knows about one pod sandbox or container.
type Container struct {
	ID           string
	PodUID       string
	PodNamespace string
	PodName      string
	Name         string
	Kind         string
	Init         bool
	Ephemeral    bool
	RestartCount int
	Hash         string
	Image        string
	ImageID      string
	LogPath      string
	PodIP        string
	NetNS        string
	// SandboxID is, for a container of a driver whose containers belong
	// to the sandbox they were created in (CRI: RemovePodSandbox removes
	// them), that sandbox; empty for a driver whose containers outlive
	// their sandbox.
	SandboxID   string
	HostNetwork bool
	State       State
	PID         uint32
	ExitCode    int32
	Reason      string
	CreatedAt   time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	// Resources are the cgroup settings the container was created with or
	// last updated to (ResourceUpdater); nil when the driver does not know
	// them.
	Resources *Resources
}

// Resources are a container's cgroup settings, what kube's kuberuntime
// hands a CRI runtime as LinuxContainerResources: the CFS quota and
// period (µs), the CPU shares (a cgroup v2 driver converts them to
// cpu.weight) and the memory limit (bytes). Zero means unset: no quota,
// no limit.
type Resources struct {
	CPUShares   uint64
	CPUQuota    int64
	CPUPeriod   uint64
	MemoryLimit int64
}

// NetNSPath is the network namespace of a pause process.
func NetNSPath(pid uint32) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf("/proc/%d/ns/net", pid)
}

// NetNSPath is the network namespace of a running sandbox: its own
// namespace, or its pause process's ("" for host network or a stopped
// sandbox).
func (c Container) NetNSPath() string {
	if c.NetNS != "" {
		if c.State == StateRunning {
			return c.NetNS
		}
		return ""
	}
	if c.State != StateRunning {
		return ""
	}
	return NetNSPath(c.PID)
}

// Mount is a bind mount of a host path into a container.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// SandboxConfig describes a pod sandbox.
type SandboxConfig struct {
	PodUID, PodNamespace, PodName string
	Hostname                      string
	// HostNetwork keeps the sandbox (and so the pod) in the node's network
	// namespace.
	HostNetwork bool
	// Sysctls are the pod's (namespaced) sysctls by dotted name, set in
	// the namespaces the sandbox owns.
	Sysctls map[string]string
	// Privileged is set when a container of the pod is privileged (a CRI
	// runtime refuses privileged containers in an unprivileged sandbox).
	Privileged bool
	// PortMappings are the pod's hostPorts, for a driver whose runtime
	// owns the pod network (NetworkOwner).
	PortMappings []PortMapping
	// Labels and Annotations are the pod's, which a CRI driver puts on the
	// sandbox as kube's kubelet does (its io.kubernetes.pod.* labels
	// winning).
	Labels, Annotations map[string]string
}

// PortMapping is a container port published on the node (hostPort).
// Protocol is "TCP", "UDP" or "SCTP".
type PortMapping struct {
	HostPort, ContainerPort int32
	Protocol, HostIP        string
}

// ContainerConfig describes an app or init container of a pod.
type ContainerConfig struct {
	PodUID, PodNamespace, PodName string
	Name                          string
	Init                          bool
	RestartCount                  int
	Hash                          string
	// Image is the reference as written in the pod; ImageRef the normalized
	// name the image is stored under (NormalizeImage).
	Image, ImageRef string
	// Command replaces the image's entrypoint, Args its cmd (kube's rules).
	Command, Args []string
	Env           []string
	WorkingDir    string
	Hostname      string
	Mounts        []Mount
	// Resources are the container's cgroup settings.
	Resources
	TTY bool
	// Stdin keeps the container's stdin open for attach; StdinOnce closes
	// it after the first attach session.
	Stdin, StdinOnce bool
	// Ephemeral marks a container kubectl debug added: never restarted.
	// TargetPID, when set, is a process whose PID namespace it joins (an
	// ephemeral container's targetContainerName).
	Ephemeral bool
	TargetPID uint32
	// SandboxPID is the pause process whose namespaces the container joins;
	// without one, NetNS is the sandbox's network namespace (HostNetwork:
	// the node's). SandboxID is the sandbox, whose shim the container shares.
	SandboxPID  uint32
	NetNS       string
	HostNetwork bool
	SandboxID   string
	LogPath     string
	// Security is the container's user, groups, capabilities and
	// confinement.
	Security Security
	// Sysctls are the pod's sysctls: a driver sets them in the namespaces
	// the container does not share with a sandbox process that has them.
	Sysctls map[string]string
	// Annotations are kube's container annotations beyond the hash and
	// restart count (io.kubernetes.container.terminationMessagePath,
	// .terminationMessagePolicy, .preStopHandler, .ports,
	// io.kubernetes.pod.terminationGracePeriod, ...), which a CRI driver
	// puts on the container; PodLabels and PodAnnotations are the pod's,
	// for the copy of the sandbox's configuration a CRI CreateContainer
	// carries.
	Annotations, PodLabels, PodAnnotations map[string]string
}

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Width, Height uint16
}
