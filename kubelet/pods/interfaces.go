package pods

import (
	"context"
	"io"
	"time"

	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// Runtime is the container runtime as the pod manager sees it: pod
// sandboxes and the containers in them, their state, and images.
// kubelet/runtime implements it over containerd; the unit tests drive the
// manager with a recording fake. Abilities a runtime may lack are the
// separate interfaces below.
type Runtime interface {
	// ListPodContainers returns the sandboxes and containers of the pod
	// with UID podUID ("" for every pod) in their current state.
	ListPodContainers(ctx context.Context, podUID string) ([]runtime.Container, error)
	// RunSandbox creates and starts a pod sandbox.
	RunSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Container, error)
	// SetSandboxIP records the address the pod network gave a sandbox.
	SetSandboxIP(ctx context.Context, sandboxID, ip string) error
	// CreateContainer creates a container without starting it.
	CreateContainer(ctx context.Context, cfg runtime.ContainerConfig) (string, error)
	// StartContainer starts a created container.
	StartContainer(ctx context.Context, id string) error
	// StopContainer stops a container (SIGTERM, then SIGKILL after grace)
	// and returns once its exit is recorded; a sandbox without a process
	// releases its namespace.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	// RemoveContainer deletes a container, stopping it first.
	RemoveContainer(ctx context.Context, id string) error
	// ImagePresent reports whether the normalized image ref is stored,
	// with its image ID.
	ImagePresent(ctx context.Context, ref string) (imageID string, ok bool, err error)
	// PullImage pulls ref and returns its image ID and size in bytes.
	PullImage(ctx context.Context, ref string) (imageID string, size int64, err error)
}

// Adopter re-attaches to a container a previous kubelet left running
// (its output and its exit), after a kubelet restart.
type Adopter interface {
	Adopt(ctx context.Context, id string) error
}

// Execer runs a command in a running container: kubectl exec and exec
// probes.
type Execer interface {
	Exec(ctx context.Context, id string, cmd []string, tty bool, stdin io.Reader, stdout, stderr io.Writer,
		resize <-chan runtime.TerminalSize) (exitCode int, err error)
}

// CgroupCleaner removes the cgroups a deleted pod left behind.
type CgroupCleaner interface {
	RemovePodCgroups(podUID string)
}

// Network attaches pods to the node's pod network; kubelet/network
// implements it with CNI.
type Network interface {
	// Ready is nil once the network is configured (the node has a podCIDR).
	Ready() error
	// Configure sets the network up for the node's podCIDR.
	Configure(podCIDR string) error
	// SetUp attaches a sandbox and returns the pod's IP.
	SetUp(ctx context.Context, p network.Pod) (string, error)
	// TearDown detaches a sandbox; it works when the sandbox is gone.
	TearDown(ctx context.Context, p network.Pod) error
}
