package server

import (
	"context"
	"encoding/base64"
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
	// ProtocolV4Base64 is v4 with each frame a text message: the channel
	// as an ASCII digit, then the data in base64.
	ProtocolV4Base64 = "v4.base64.channel.k8s.io"
	// ProtocolV1 and ProtocolV1Base64 are the protocols before v4 (what
	// browsers and old clients, the conformance suite among them, ask
	// for; a client that offers none gets ProtocolV1's framing): the
	// error channel carries only a failure's message, nothing on success.
	ProtocolV1       = "channel.k8s.io"
	ProtocolV1Base64 = "base64.channel.k8s.io"

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

// remoteCommandProtocols are the subprotocols the exec and attach
// WebSocket speaks, as the kubelet's streaming server (k8s.io/apiserver's
// wsstream) plus v5.
var remoteCommandProtocols = []string{ProtocolV5, ProtocolV4, ProtocolV4Base64, ProtocolV1, ProtocolV1Base64}

// negotiateChannelProtocol is wsstream's handshake: the first of the
// client's subprotocols the server speaks; a client offering none gets
// "" (ProtocolV1's framing). ok is false when none of the offered is spoken.
func negotiateChannelProtocol(r *http.Request) (proto string, ok bool) {
	offered := websocket.Subprotocols(r)
	if len(offered) == 0 {
		return "", true
	}
	for _, p := range offered {
		if slices.Contains(remoteCommandProtocols, p) {
			return p, true
		}
	}
	return "", false
}

// wsConn serialises writes of channel messages on a WebSocket.
type wsConn struct {
	c      *websocket.Conn
	base64 bool // text frames: '0'+channel, then base64 data
	mu     sync.Mutex
}

func (w *wsConn) send(channel byte, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if w.base64 {
		return w.c.WriteMessage(websocket.TextMessage, []byte(string(rune('0'+channel))+base64.StdEncoding.EncodeToString(data)))
	}
	msg := make([]byte, 1+len(data))
	msg[0] = channel
	copy(msg[1:], data)
	return w.c.WriteMessage(websocket.BinaryMessage, msg)
}

// decode splits a received message into its channel and data.
func (w *wsConn) decode(msg []byte) (byte, []byte, bool) {
	if len(msg) == 0 {
		return 0, nil, false
	}
	if !w.base64 {
		return msg[0], msg[1:], true
	}
	data, err := base64.StdEncoding.DecodeString(string(msg[1:]))
	if err != nil {
		return 0, nil, false
	}
	return msg[0] - '0', data, true
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

// upgrader takes the subprotocol from the response header, set from
// negotiateChannelProtocol (the client's preference, as kube, not the
// server's order).
var upgrader = websocket.Upgrader{
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
		writeStatus(w, apierrors.NewBadRequest(verb+" needs a WebSocket upgrade with subprotocol one of "+strings.Join(remoteCommandProtocols, ", ")+
			", or a SPDY/3.1 upgrade with "+httpstream.RemoteCommandProtocolV4))
		return
	}
	proto, ok := negotiateChannelProtocol(r)
	if !ok {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("%s: unsupported subprotocols %q, want one of %s", verb, websocket.Subprotocols(r), strings.Join(remoteCommandProtocols, ", "))))
		return
	}
	var hdr http.Header
	if proto != "" {
		hdr = http.Header{"Sec-Websocket-Protocol": {proto}}
	}
	c, err := upgrader.Upgrade(w, r, hdr)
	if err != nil {
		return // the upgrader has answered
	}
	defer c.Close()
	conn := &wsConn{c: c, base64: proto == ProtocolV4Base64 || proto == ProtocolV1Base64}
	// Before v4 the error channel carries a failure's message only.
	statusV1 := proto != ProtocolV5 && proto != ProtocolV4 && proto != ProtocolV4Base64
	log := s.log.With("pod", pod.Namespace+"/"+pod.Name, "container", container)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	// An empty message tells the client the session is open: on each
	// output channel for v5 and v4, on the lowest writable one otherwise
	// (the kubelet's streaming server).
	opened := outputChannels(opts)
	if proto != ProtocolV5 && proto != ProtocolV4 {
		opened = opened[:1]
	}
	for _, ch := range opened {
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
			_, msg, err := c.ReadMessage()
			if err != nil {
				cancel() // the client went away: stop the command
				return
			}
			if proto == ProtocolV5 && len(msg) > 0 && msg[0] == channelClose {
				if len(msg) >= 2 && msg[1] == channelStdin && stdinW != nil {
					_ = stdinW.Close()
					stdinW = nil
				}
				continue
			}
			ch, data, ok := conn.decode(msg)
			if !ok {
				continue
			}
			switch ch {
			case channelStdin:
				if stdinW != nil {
					if _, err := stdinW.Write(data); err != nil {
						stdinW = nil
					}
				}
			case channelResize:
				if resize == nil {
					continue
				}
				var sz TerminalSize
				if json.Unmarshal(data, &sz) == nil {
					select {
					case resize <- sz:
					case <-ctx.Done():
						return
					}
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
	if statusV1 {
		// v1WriteStatusFunc: a failure's message, nothing on success.
		b = nil
		if st.Status != api.StatusSuccess {
			b = []byte(st.Message)
		}
	}
	if b != nil {
		if err := conn.send(channelError, b); err != nil {
			log.Debug("exec: write the result", "err", err)
		}
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
