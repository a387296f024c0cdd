package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/minik8s/minik8s/kubelet/runtime"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Exec runs cmd in container id. A call without stdin or a terminal and
// with a deadline (probes, hooks) is ExecSync, bounded by the deadline;
// every other (kubectl exec, which streams its output as it comes, as
// kube's kubelet does) goes through the runtime's streaming server (Exec's
// URL), which carries the streams and the terminal's size over SPDY.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, tty bool, stdin io.Reader, stdout, stderr io.Writer,
	resize <-chan runtime.TerminalSize) (int, error) {
	if _, bounded := ctx.Deadline(); bounded && stdin == nil && !tty {
		return r.execSync(ctx, id, cmd, stdout, stderr)
	}
	rctx, cancel := r.callCtx(ctx)
	resp, err := r.rs.Exec(rctx, &criapi.ExecRequest{ContainerId: id, Cmd: cmd, Tty: tty,
		Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil && !tty})
	cancel()
	if err != nil {
		return -1, fmt.Errorf("Exec: %w", err)
	}
	err = stream(ctx, resp.Url, tty, stdin, stdout, stderr, resize)
	var exit interface{ ExitStatus() int }
	if errors.As(err, &exit) {
		return exit.ExitStatus(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

func (r *Runtime) execSync(ctx context.Context, id string, cmd []string, stdout, stderr io.Writer) (int, error) {
	var timeout int64
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(int64((time.Until(dl)+time.Second-1)/time.Second), 1)
	}
	resp, err := r.rs.ExecSync(ctx, &criapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: timeout})
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return -1, fmt.Errorf("ExecSync: %w", err)
	}
	if stdout != nil {
		_, _ = stdout.Write(resp.Stdout)
	}
	if stderr != nil {
		_, _ = stderr.Write(resp.Stderr)
	}
	return int(resp.ExitCode), nil
}

// Attach connects to container id's main process through the runtime's
// streaming server (Attach's URL).
func (r *Runtime) Attach(ctx context.Context, id string, tty bool, stdin io.Reader, stdout, stderr io.Writer, resize <-chan runtime.TerminalSize) error {
	st, err := r.containerStatus(ctx, id, false)
	if err != nil {
		return err
	}
	if st.State != runtime.StateRunning {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotAttachable)
	}
	rctx, cancel := r.callCtx(ctx)
	resp, err := r.rs.Attach(rctx, &criapi.AttachRequest{ContainerId: id, Tty: tty,
		Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil && !tty})
	cancel()
	if err != nil {
		return fmt.Errorf("Attach: %w", err)
	}
	return stream(ctx, resp.Url, tty, stdin, stdout, stderr, resize)
}

// stream connects to a streaming server URL as crictl does: SPDY, the
// server's certificate unchecked (the runtime's server listens on the
// node's loopback).
func stream(ctx context.Context, rawURL string, tty bool, stdin io.Reader, stdout, stderr io.Writer, resize <-chan runtime.TerminalSize) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("streaming URL %q: %w", rawURL, err)
	}
	ex, err := remotecommand.NewSPDYExecutor(&restclient.Config{TLSClientConfig: restclient.TLSClientConfig{Insecure: true}}, "POST", u)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty}
	if tty {
		opts.Stderr = nil
	}
	if resize != nil && tty {
		opts.TerminalSizeQueue = sizeQueue{ctx: ctx, c: resize}
	}
	return ex.StreamWithContext(ctx, opts)
}

// sizeQueue relays terminal sizes to remotecommand; nil ends it.
type sizeQueue struct {
	ctx context.Context
	c   <-chan runtime.TerminalSize
}

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s, ok := <-q.c:
		if !ok {
			return nil
		}
		return &remotecommand.TerminalSize{Width: s.Width, Height: s.Height}
	case <-q.ctx.Done():
		return nil
	}
}
