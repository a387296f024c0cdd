package httpstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// The protocol's names and headers (k8s.io/api/core/v1's PortHeader and
// friends, apimachinery's portforward constants).
const (
	// Protocol is the one port-forward protocol version there is.
	Protocol = "portforward.k8s.io"
	// TunnelPrefix prefixes the WebSocket subprotocol of SPDY tunneled over
	// WebSocket: "SPDY/3.1+portforward.k8s.io".
	TunnelPrefix = "SPDY/3.1+"
	// UpgradeSPDY is the Upgrade header value of a plain SPDY connection.
	UpgradeSPDY = spdy.HeaderSpdy31
	// HeaderProtocolVersion carries the offered and the chosen protocols.
	HeaderProtocolVersion = httpstream.HeaderProtocolVersion

	headerStreamType = "streamType"
	headerPort       = "port"
	headerRequestID  = "requestID"
	streamTypeError  = "error"
	streamTypeData   = "data"
)

// Timeouts of the kubelet's streaming server.
const (
	// DefaultIdleTimeout closes a connection without traffic (the kubelet's
	// --streaming-connection-idle-timeout default).
	DefaultIdleTimeout = 4 * time.Hour
	// streamCreationTimeout bounds the wait for the second stream of a pair.
	streamCreationTimeout = 30 * time.Second
)

// DialFunc connects to port inside the pod.
type DialFunc func(ctx context.Context, port uint16) (net.Conn, error)

// PortForwardOptions configure ServePortForward.
type PortForwardOptions struct {
	// Dial connects to a port of the pod.
	Dial DialFunc
	// ErrorPrefix words a failure to forward port as the kubelet does; the
	// cause follows after ": ". Default "error forwarding port N".
	ErrorPrefix func(port uint16) string
	IdleTimeout time.Duration
	Logger      *slog.Logger
}

// ServePortForward negotiates the port-forward protocol, upgrades the request to SPDY
// and forwards every data/error stream pair to its port until the client
// closes the connection or ctx ends. A request that cannot be upgraded is
// answered with the reason (400 or 403), as the kubelet does.
func ServePortForward(ctx context.Context, w http.ResponseWriter, r *http.Request, opts PortForwardOptions) {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ErrorPrefix == nil {
		opts.ErrorPrefix = func(port uint16) string { return fmt.Sprintf("error forwarding port %d", port) }
	}
	if _, err := httpstream.Handshake(r, w, []string{Protocol}); err != nil {
		return // Handshake has answered
	}
	ctx, cancel := context.WithCancel(ctx)
	streams := make(chan httpstream.Stream, 1)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		select {
		case streams <- s:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if conn == nil {
		cancel()
		return // the upgrader has answered
	}
	defer conn.Close()
	conn.SetIdleTimeout(opts.IdleTimeout)
	h := &handler{opts: opts, conn: conn, pairs: map[string]*pair{}}
	defer func() {
		cancel()
		h.wg.Wait()
	}()
	for {
		select {
		case <-conn.CloseChan():
			return
		case <-ctx.Done():
			return
		case s := <-streams:
			h.add(ctx, s)
		}
	}
}

// pair is the error and data streams of one forwarded connection.
type pair struct {
	id          string
	data, errs  httpstream.Stream
	timer       *time.Timer
	started     bool
	forwardOnce sync.Once
}

type handler struct {
	opts  PortForwardOptions
	conn  httpstream.Connection
	mu    sync.Mutex
	pairs map[string]*pair
	wg    sync.WaitGroup
}

// add files a new stream under its requestID and starts forwarding once
// both streams of the pair have arrived.
func (h *handler) add(ctx context.Context, s httpstream.Stream) {
	id := s.Headers().Get(headerRequestID)
	h.mu.Lock()
	p, ok := h.pairs[id]
	if !ok {
		p = &pair{id: id}
		h.pairs[id] = p
		p.timer = time.AfterFunc(streamCreationTimeout, func() { h.expire(id) })
	}
	switch s.Headers().Get(headerStreamType) {
	case streamTypeError:
		if p.errs != nil {
			h.mu.Unlock()
			h.opts.Logger.Debug("port-forward: duplicate error stream", "requestID", id)
			_ = s.Reset()
			return
		}
		p.errs = s
	case streamTypeData:
		if p.data != nil {
			h.mu.Unlock()
			h.opts.Logger.Debug("port-forward: duplicate data stream", "requestID", id)
			_ = s.Reset()
			return
		}
		p.data = s
	default:
		h.mu.Unlock()
		h.opts.Logger.Debug("port-forward: stream of unknown type", "type", s.Headers().Get(headerStreamType))
		_ = s.Reset()
		return
	}
	complete := p.data != nil && p.errs != nil
	if complete {
		p.timer.Stop()
		delete(h.pairs, id)
	}
	h.mu.Unlock()
	if complete {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.forward(ctx, p)
		}()
	}
}

// expire drops a pair whose second stream did not come in time.
func (h *handler) expire(id string) {
	h.mu.Lock()
	p, ok := h.pairs[id]
	delete(h.pairs, id)
	h.mu.Unlock()
	if !ok {
		return
	}
	if p.errs != nil {
		fmt.Fprintf(p.errs, "timeout waiting for the data stream of request %s", id)
		_ = p.errs.Close()
	}
	for _, s := range []httpstream.Stream{p.data, p.errs} {
		if s != nil {
			_ = s.Reset()
			h.conn.RemoveStreams(s)
		}
	}
}

// forward copies between the data stream and the pod's port; a failure is
// written to the error stream, where the client reads it.
func (h *handler) forward(ctx context.Context, p *pair) {
	defer h.conn.RemoveStreams(p.data, p.errs)
	defer p.errs.Close()
	defer p.data.Close()
	ps := p.data.Headers().Get(headerPort)
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 {
		fmt.Fprintf(p.errs, "invalid port header %q: port must be a number between 1 and 65535", ps)
		return
	}
	if err := h.copy(ctx, uint16(port), p.data); err != nil {
		msg := h.opts.ErrorPrefix(uint16(port)) + ": " + err.Error()
		h.opts.Logger.Debug("port-forward failed", "port", port, "err", err)
		_, _ = io.WriteString(p.errs, msg)
	}
}

func (h *handler) copy(ctx context.Context, port uint16, stream io.ReadWriter) error {
	c, err := h.opts.Dial(ctx, port)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	inDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(c, stream)
		if err == nil {
			// The client's half-close: the pod's end reads EOF and may still answer.
			if cw, ok := c.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
		} else {
			_ = c.Close()
		}
		inDone <- err
	}()
	_, err = io.Copy(stream, c)
	if err != nil && !errors.Is(err, net.ErrClosed) && ctx.Err() == nil {
		return fmt.Errorf("error copying from remote stream to local connection: %w", err)
	}
	// As containerd: the other direction gets a moment to finish.
	select {
	case <-inDone:
	case <-time.After(time.Second):
	}
	return nil
}
