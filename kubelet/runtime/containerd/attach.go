package containerd

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// attachHub is what attach needs of a running container: its output fanned
// out to the attached clients besides the log file, and the write end of
// its stdin when it was started with stdin (as containerd's CRI keeps the
// stdin FIFO of such containers).
type attachHub struct {
	mu        sync.Mutex
	sinks     map[*attachSink]struct{}
	stdin     *io.PipeWriter // nil: the container has no stdin
	stdinR    *io.PipeReader
	stdinOnce bool
	stdinLock sync.Mutex // one attached writer at a time
	done      chan struct{}
	closeOnce sync.Once
}

type attachSink struct{ stdout, stderr io.Writer }

func newAttachHub(stdin, stdinOnce bool) *attachHub {
	h := &attachHub{sinks: map[*attachSink]struct{}{}, done: make(chan struct{}), stdinOnce: stdinOnce}
	if stdin {
		h.stdinR, h.stdin = io.Pipe()
	}
	return h
}

// containerStdin is what containerd's IO copies into the stdin FIFO.
func (h *attachHub) containerStdin() io.Reader {
	if h.stdinR == nil {
		return nil
	}
	return h.stdinR
}

// close ends every attach session: the container's output is over.
func (h *attachHub) close() {
	h.closeOnce.Do(func() {
		close(h.done)
		if h.stdinR != nil {
			_ = h.stdinR.CloseWithError(io.ErrClosedPipe)
		}
	})
}

func (h *attachHub) broadcast(stderr bool, p []byte) {
	h.mu.Lock()
	var ws []io.Writer
	for s := range h.sinks {
		w := s.stdout
		if stderr {
			w = s.stderr
		}
		if w != nil {
			ws = append(ws, w)
		}
	}
	h.mu.Unlock()
	for _, w := range ws {
		_, _ = w.Write(p)
	}
}

// teeWriter writes a stream to the log file and to the attached clients.
type teeWriter struct {
	log    io.Writer
	hub    *attachHub
	stderr bool
}

func (t teeWriter) Write(p []byte) (int, error) {
	n, err := t.log.Write(p)
	t.hub.broadcast(t.stderr, p)
	return n, err
}

// Attach connects to the main process of the running container id: its
// output from now on goes to stdout and stderr (with a terminal, all of it
// to stdout), stdin to the process's stdin when the container was created
// with Stdin (otherwise it is dropped, as containerd's CRI drops it), and
// resize resizes its terminal. It returns when ctx ends or the container's
// output ends. A container started with StdinOnce gets EOF on its stdin
// once the first session that attached stdin ends or closes it.
func (r *Runtime) Attach(ctx context.Context, id string, tty bool, stdin io.Reader, stdout, stderr io.Writer, resize <-chan runtime.TerminalSize) error {
	r.mu.Lock()
	tio := r.tasks[id]
	r.mu.Unlock()
	if tio == nil || tio.hub == nil {
		return fmt.Errorf("attach to %s: %w", id, runtime.ErrNotAttachable)
	}
	h := tio.hub
	sink := &attachSink{stdout: stdout, stderr: stderr}
	h.mu.Lock()
	h.sinks[sink] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sinks, sink)
		h.mu.Unlock()
	}()
	if stdin != nil && h.stdin != nil {
		go func() {
			h.stdinLock.Lock()
			defer h.stdinLock.Unlock()
			// Closed by the client or ended with its session: either way
			// a StdinOnce container's first attach is over.
			_, _ = io.Copy(h.stdin, stdin)
			if h.stdinOnce {
				_ = h.stdin.Close()
				// The shim holds a writer of the stdin FIFO too: the
				// process sees EOF once it lets go (CRI's CloseStdin).
				r.closeStdin(id)
			}
		}()
	}
	if tty && resize != nil {
		go func() {
			c, err := r.client.LoadContainer(r.nsctx(ctx), id)
			if err != nil {
				return
			}
			t, err := c.Task(r.nsctx(ctx), nil)
			if err != nil {
				return
			}
			for sz := range resize {
				_ = t.Resize(r.nsctx(ctx), uint32(sz.Width), uint32(sz.Height))
			}
		}()
	}
	select {
	case <-ctx.Done():
	case <-h.done:
	}
	return nil
}

// closeStdin closes the stdin the shim keeps open for container id.
func (r *Runtime) closeStdin(id string) {
	ctx, cancel := context.WithTimeout(r.nsctx(r.ctx), 10*time.Second)
	defer cancel()
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return
	}
	t, err := c.Task(ctx, nil)
	if err != nil {
		return
	}
	if err := t.CloseIO(ctx, containerd.WithStdinCloser); err != nil {
		r.log.Debug("close container stdin", "container", id, "err", err)
	}
}
