package server

import (
	"context"
	"errors"
	"io"

	"github.com/minik8s/minik8s/api"
)

// PodLookup finds the pods this kubelet runs; the kubelet's pod manager
// implements it.
type PodLookup interface {
	// GetPodByName returns the pod namespace/name bound to this node.
	GetPodByName(namespace, name string) (*api.Pod, bool)
	// GetPods returns every pod bound to this node (for /pods).
	GetPods() []*api.Pod
}

// TerminalSize is a resize message of an exec session with a TTY (the
// channel 4 JSON {"Width":W,"Height":H}).
type TerminalSize struct {
	Width  uint16
	Height uint16
}

// Executor runs a command in a running container of a pod; the kubelet's
// runtime implements it.
type Executor interface {
	// Exec runs cmd in container of the pod with uid podUID. stdin, stdout
	// and stderr may be nil when the client did not ask for them (with tty,
	// stderr is nil: the terminal merges it into stdout). resize delivers
	// terminal size changes when tty is set and is closed when the session
	// ends. Exec returns the command's exit code once it has exited and its
	// output has been copied; err is for failures to run it at all (no such
	// container: wrap ErrContainerNotFound).
	Exec(ctx context.Context, podUID, container string, cmd []string, tty bool,
		stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) (exitCode int, err error)
}

// ErrContainerNotFound is what an Executor wraps when the container does not
// exist or is not running; the server answers 404.
var ErrContainerNotFound = errors.New("container not found")
