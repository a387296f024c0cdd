package runtime

import (
	"context"
	"errors"
	"io"
	"time"
)

// Runtime is a container runtime driver as the pod manager sees it: pod
// sandboxes and the containers in them, their state, and images.
// kubelet/runtime/containerd implements it over containerd; the pod
// manager's unit tests (and a node without containers) use
// kubelet/runtime/fake. Abilities a driver may lack are the separate
// interfaces below; the pod manager asks for them with a type assertion.
type Runtime interface {
	// Type is the runtime's name, the scheme of the container IDs the
	// kubelet reports ("containerd" gives "containerd://ID").
	Type() string
	// ListPodContainers returns the sandboxes and containers of the pod
	// with UID podUID ("" for every pod) in their current state.
	ListPodContainers(ctx context.Context, podUID string) ([]Container, error)
	// RunSandbox creates and starts a pod sandbox.
	RunSandbox(ctx context.Context, cfg SandboxConfig) (Container, error)
	// SetSandboxIP records the address the pod network gave a sandbox.
	SetSandboxIP(ctx context.Context, sandboxID, ip string) error
	// CreateContainer creates a container without starting it.
	CreateContainer(ctx context.Context, cfg ContainerConfig) (string, error)
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
	// ImageUser is the USER the stored image ref runs as ("", "1000",
	// "1000:1000", "nobody"), which decides the user of a container whose
	// pod sets no runAsUser.
	ImageUser(ctx context.Context, ref string) (string, error)
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
		resize <-chan TerminalSize) (exitCode int, err error)
}

// Attacher connects to a running container's main process: kubectl attach
// and kubectl debug -it. A container without such a process gives an
// error wrapping ErrNotAttachable.
type Attacher interface {
	Attach(ctx context.Context, id string, tty bool, stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) error
}

// ResourceUpdater changes the cgroup settings of a running container in
// place (an in-place pod resize, kube's UpdateContainerResources); the
// container reports them as its Resources afterwards. Unset (zero) values
// are left as they are.
type ResourceUpdater interface {
	UpdateContainerResources(ctx context.Context, id string, r Resources) error
}

// CgroupCleaner removes the cgroups a deleted pod left behind.
type CgroupCleaner interface {
	RemovePodCgroups(podUID string)
}

// ImageMounter mounts an image's root filesystem read-only on the node: a
// pod's image volumes (volumes[].image). MountImage of a target already
// mounted does nothing; UnmountImage of one not mounted neither.
type ImageMounter interface {
	MountImage(ctx context.Context, ref, target string) error
	UnmountImage(ctx context.Context, target string) error
}

// ErrNoImageMounts is the error of a runtime that cannot mount image
// volumes.
var ErrNoImageMounts = errors.New("the container runtime cannot mount image volumes")

// NetworkOwner is a driver whose runtime attaches pod sandboxes to the pod
// network itself (a CRI runtime runs CNI with the conflist the kubelet
// writes) and reports the pod IP in the sandbox it returns. The pod
// manager then makes no CNI calls for its pods and records no IP
// (SetSandboxIP).
type NetworkOwner interface {
	OwnsPodNetwork() bool
}

// OwnsPodNetwork reports whether rt's runtime attaches pods to the pod
// network itself.
func OwnsPodNetwork(rt Runtime) bool {
	no, ok := rt.(NetworkOwner)
	return ok && no.OwnsPodNetwork()
}
