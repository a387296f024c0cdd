package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/httpstream"
)

// The remote command protocol over WebSocket (k8s.io/apimachinery wsstream
// with the channel.k8s.io subprotocols).
const (
	ProtocolV5 = "v5.channel.k8s.io"
	ProtocolV4 = "v4.channel.k8s.io"

	channelStdin  byte = 0
	channelStdout byte = 1
	channelStderr byte = 2
	channelError  byte = 3
	channelResize byte = 4
	channelClose  byte = 255
)

// execOptions are the query of /exec.
type execOptions struct {
	Command                    []string
	Stdin, Stdout, Stderr, TTY bool
}

func parseExecOptions(r *http.Request) (execOptions, error) {
	q := r.URL.Query()
	o := execOptions{Command: q["command"], Stdin: queryBool(q.Get("stdin")), Stdout: queryBool(q.Get("stdout")),
		Stderr: queryBool(q.Get("stderr")), TTY: queryBool(q.Get("tty"))}
	if len(o.Command) == 0 {
		return o, errors.New("you must specify at least 1 command")
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return o, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	if o.TTY && o.Stderr {
		// As the kubelet: a terminal has no separate stderr.
		o.Stderr = false
	}
	return o, nil
}

// wsConn serialises writes of channel messages on a WebSocket.
type wsConn struct {
	c  *websocket.Conn
	mu sync.Mutex
}

func (w *wsConn) send(channel byte, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	msg := make([]byte, 1+len(data))
	msg[0] = channel
	copy(msg[1:], data)
	_ = w.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return w.c.WriteMessage(websocket.BinaryMessage, msg)
}

// channelWriter is an io.Writer onto one output channel.
type channelWriter struct {
	conn    *wsConn
	channel byte
}

func (cw channelWriter) Write(p []byte) (int, error) {
	// Large writes are split so no message gets unwieldy.
	const max = 32 << 10
	for off := 0; off < len(p); off += max {
		end := min(off+max, len(p))
		if err := cw.conn.send(cw.channel, p[off:end]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

var upgrader = websocket.Upgrader{
	Subprotocols:     []string{ProtocolV5, ProtocolV4},
	HandshakeTimeout: 30 * time.Second,
	// The apiserver proxies the client's Origin; authentication is by
	// client certificate, so the origin is not what protects this endpoint.
	CheckOrigin: func(*http.Request) bool { return true },
}

// serveExec upgrades to WebSocket and runs the command in the container,
// streaming stdin, stdout, stderr and resizes, then reports the result on
// the error channel.
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	pod, container, ok := s.lookupContainer(w, r)
	if !ok {
		return
	}
	opts, err := parseExecOptions(r)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if s.cfg.Exec == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusNotImplemented, api.StatusReasonInternalError, "exec is not supported by this kubelet"))
		return
	}
	s.serveRemoteCommand(w, r, pod, container, opts, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) api.Status {
		code, err := s.cfg.Exec.Exec(ctx, string(pod.UID), container, opts.Command, opts.TTY, stdin, stdout, stderr, resize)
		return execStatus(opts.Command, code, err)
	})
}

// remoteCommand runs one session's work (an exec'd command, an attach)
// and returns the Status for the error channel.
type remoteCommand func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) api.Status

// serveRemoteCommand upgrades to WebSocket and runs run with the session's
// streams, then reports its Status on the error channel.
func (s *Server) serveRemoteCommand(w http.ResponseWriter, r *http.Request, pod *api.Pod, container string, opts execOptions, run remoteCommand) {
	verb := "exec"
	if opts.Command == nil {
		verb = "attach"
	}
	if !websocket.IsWebSocketUpgrade(r) && httpstream.IsSPDYUpgrade(r) {
		s.serveRemoteCommandSPDY(w, r, pod, container, verb, opts, run)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		writeStatus(w, apierrors.NewBadRequest(verb+" needs a WebSocket upgrade with subprotocol "+ProtocolV5+" or "+ProtocolV4+
			", or a SPDY/3.1 upgrade with "+httpstream.RemoteCommandProtocolV4))
		return
	}
	if !slices.ContainsFunc(websocket.Subprotocols(r), func(p string) bool { return p == ProtocolV5 || p == ProtocolV4 }) {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("%s: unsupported subprotocols %q, want %s or %s", verb, websocket.Subprotocols(r), ProtocolV5, ProtocolV4)))
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	defer c.Close()
	proto := c.Subprotocol()
	conn := &wsConn{c: c}
	log := s.log.With("pod", pod.Namespace+"/"+pod.Name, "container", container)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	// An empty message on each output channel tells the client it is open.
	for _, ch := range outputChannels(opts) {
		if err := conn.send(ch, nil); err != nil {
			return
		}
	}
	var stdin io.Reader
	var stdinR *io.PipeReader
	var stdinW *io.PipeWriter
	if opts.Stdin {
		stdinR, stdinW = io.Pipe()
		stdin = stdinR
	}
	var resize chan TerminalSize
	if opts.TTY {
		resize = make(chan TerminalSize, 4)
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer func() {
			if stdinW != nil {
				_ = stdinW.Close()
			}
		}()
		for {
			typ, msg, err := c.ReadMessage()
			if err != nil {
				cancel() // the client went away: stop the command
				return
			}
			if typ != websocket.BinaryMessage || len(msg) == 0 {
				continue
			}
			switch msg[0] {
			case channelStdin:
				if stdinW != nil {
					if _, err := stdinW.Write(msg[1:]); err != nil {
						stdinW = nil
					}
				}
			case channelResize:
				if resize == nil {
					continue
				}
				var sz TerminalSize
				if json.Unmarshal(msg[1:], &sz) == nil {
					select {
					case resize <- sz:
					case <-ctx.Done():
						return
					}
				}
			case channelClose:
				if proto == ProtocolV5 && len(msg) >= 2 && msg[1] == channelStdin && stdinW != nil {
					_ = stdinW.Close()
					stdinW = nil
				}
			}
		}
	}()

	var stdout, stderr io.Writer
	if opts.Stdout {
		stdout = channelWriter{conn, channelStdout}
	}
	if opts.Stderr {
		stderr = channelWriter{conn, channelStderr}
	}
	start := time.Now()
	st := run(ctx, stdin, stdout, stderr, resize)
	if stdinR != nil {
		// Unblock the reader if it is handing stdin nobody reads any more.
		_ = stdinR.CloseWithError(io.ErrClosedPipe)
	}
	b, _ := json.Marshal(st)
	if err := conn.send(channelError, b); err != nil {
		log.Debug("exec: write the result", "err", err)
	}
	conn.mu.Lock()
	_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	conn.mu.Unlock()
	cancel()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	<-readerDone
	log.Debug(verb+" finished", "command", strings.Join(opts.Command, " "), "status", st.Status, "message", st.Message, "elapsed", time.Since(start))
}

func outputChannels(o execOptions) []byte {
	var out []byte
	if o.Stdout {
		out = append(out, channelStdout)
	}
	if o.Stderr {
		out = append(out, channelStderr)
	}
	return append(out, channelError)
}

// execStatus is the Status sent on the error channel, as the kubelet's.
func execStatus(cmd []string, code int, err error) api.Status {
	st := api.Status{TypeMeta: api.TypeMeta{}, Status: api.StatusSuccess}
	switch {
	case err != nil:
		st = api.Status{Status: api.StatusFailure, Reason: api.StatusReasonInternalError, Code: http.StatusInternalServerError,
			Message: fmt.Sprintf("Internal error occurred: error executing command in container: %v", err)}
		if errors.Is(err, ErrContainerNotFound) {
			st.Reason, st.Code = api.StatusReasonNotFound, http.StatusNotFound
		}
	case code != 0:
		st = api.Status{Status: api.StatusFailure, Reason: "NonZeroExitCode",
			Message: fmt.Sprintf("command terminated with non-zero exit code: error executing command %v, exit code %d", cmd, code),
			Details: &api.StatusDetails{Causes: []api.StatusCause{{Type: "ExitCode", Message: fmt.Sprint(code)}}}}
	}
	return st
}

// serveRemoteCommandSPDY is the same session over SPDY
// (v4.channel.k8s.io), what kubectl falls back to when a WebSocket cannot
// be had.
func (s *Server) serveRemoteCommandSPDY(w http.ResponseWriter, r *http.Request, pod *api.Pod, container, verb string, opts execOptions, run remoteCommand) {
	log := s.log.With("pod", pod.Namespace+"/"+pod.Name, "container", container)
	start := time.Now()
	var st api.Status
	err := httpstream.ServeRemoteCommand(r.Context(), w, r,
		httpstream.RemoteCommandOptions{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, TTY: opts.TTY},
		func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, resize <-chan httpstream.TerminalSize) []byte {
			var sizes chan TerminalSize
			if resize != nil {
				sizes = make(chan TerminalSize)
				go func() {
					defer close(sizes)
					for sz := range resize {
						select {
						case sizes <- TerminalSize{Width: sz.Width, Height: sz.Height}:
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			st = run(ctx, stdin, stdout, stderr, sizes)
			b, _ := json.Marshal(st)
			return b
		})
	log.Debug(verb+" finished (SPDY)", "status", st.Status, "message", st.Message, "err", err, "elapsed", time.Since(start))
}
