package server

import (
	"context"
	"errors"
	"io"
	"net"

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

// Attacher connects to the streams of a running container's main process;
// the kubelet's runtime implements it.
type Attacher interface {
	// Attach copies stdin to the container's stdin (when it has one) and
	// its output to stdout and stderr (nil: not wanted; with tty, stderr is
	// nil) until ctx ends or the container exits. A missing or stopped
	// container wraps ErrContainerNotFound.
	Attach(ctx context.Context, podUID, container string, tty bool,
		stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) error
}

// PortForwarder reaches ports inside a pod's network namespace.
type PortForwarder interface {
	// PortForwardDialer returns the pod sandbox's ID and a dialer to
	// 127.0.0.1:PORT inside its network namespace.
	PortForwardDialer(ctx context.Context, podUID string) (sandboxID string,
		dial func(ctx context.Context, port uint16) (net.Conn, error), err error)
}

// Authorizer decides whether a user may do verb on the node's subresource
// (stats, metrics, log, proxy); the kubelet app asks the apiserver with a
// SubjectAccessReview.
type Authorizer interface {
	Authorize(ctx context.Context, user string, groups []string, verb, subresource string) (allowed bool, reason string, err error)
}

// TokenAuthenticator says whose a bearer token is; the kubelet app asks
// the apiserver with a TokenReview (--authentication-token-webhook). An
// unknown token is an error.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (user string, groups []string, err error)
}
