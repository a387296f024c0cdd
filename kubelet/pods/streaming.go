package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/minik8s/minik8s/kubelet/network"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

var errAttachUnsupported = errors.New("the container runtime cannot attach to containers")

// Attach attaches to the running container named container of pod podUID.
func (m *Manager) Attach(ctx context.Context, podUID, container string, tty bool,
	stdin io.Reader, stdout, stderr io.Writer, resize <-chan runtime.TerminalSize) error {
	a, ok := m.rt.(runtime.Attacher)
	if !ok {
		return errAttachUnsupported
	}
	id, err := m.RunningContainerID(ctx, podUID, container)
	if err != nil {
		return err
	}
	if err := a.Attach(ctx, id, tty, stdin, stdout, stderr, resize); err != nil {
		if errors.Is(err, runtime.ErrNotAttachable) {
			return fmt.Errorf("%w: %v", ErrContainerNotFound, err)
		}
		return err
	}
	return nil
}

// PortForwardDialer returns the running sandbox of pod podUID and a dialer
// to ports inside its network namespace.
func (m *Manager) PortForwardDialer(ctx context.Context, podUID string) (string, func(context.Context, uint16) (net.Conn, error), error) {
	cs, err := m.rt.ListPodContainers(ctx, podUID)
	if err != nil {
		return "", nil, err
	}
	for _, c := range cs {
		if c.Kind != runtime.KindSandbox {
			continue
		}
		path := c.NetNSPath()
		if path == "" {
			continue
		}
		id := c.ID
		return id, func(ctx context.Context, port uint16) (net.Conn, error) {
			return network.DialInNetNS(ctx, path, id, port)
		}, nil
	}
	return "", nil, fmt.Errorf("pod %s has no running sandbox: %w", podUID, ErrContainerNotFound)
}
