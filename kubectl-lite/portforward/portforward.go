package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/internal/client"
	pf "github.com/minik8s/minik8s/internal/httpstream"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
)

// Port is one LOCAL:REMOTE pair; Local 0 picks a free port.
type Port struct {
	Local, Remote uint16
}

// ParsePorts reads "LOCAL:REMOTE", ":REMOTE" and "PORT" specs; resolve
// (nil: numbers only) maps each REMOTE, a number or a name, to the pod's
// port (a Service's ports translate to their target ports). "PORT" alone
// listens on the same port number it names.
func ParsePorts(specs []string, resolve func(remote string) (uint16, error)) ([]Port, error) {
	var out []Port
	for _, s := range specs {
		local, remote, ok := strings.Cut(s, ":")
		if !ok {
			remote, local = s, s
		}
		if remote == "" {
			return nil, errors.New("remote port cannot be empty")
		}
		var p Port
		n, err := strconv.ParseUint(remote, 10, 16)
		switch {
		case err == nil && n == 0:
			return nil, errors.New("remote port must be > 0")
		case resolve != nil:
			r, rerr := resolve(remote)
			if rerr != nil {
				return nil, rerr
			}
			p.Remote = r
		case err == nil:
			p.Remote = uint16(n)
		default:
			return nil, fmt.Errorf("error parsing remote port '%s': %w", remote, err)
		}
		switch {
		case !ok && err == nil:
			p.Local = uint16(n)
		case !ok:
			p.Local = p.Remote
		case local != "":
			l, err := strconv.ParseUint(local, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("error parsing local port '%s': %w", local, err)
			}
			p.Local = uint16(l)
		}
		out = append(out, p)
	}
	return out, nil
}

// Options of Forward.
type Options struct {
	// Addresses to listen on ("localhost": 127.0.0.1 and ::1).
	Addresses []string
	Ports     []Port
	Out       io.Writer
	ErrOut    io.Writer
	// Ready, if set, is closed once every listener is up.
	Ready chan struct{}
}

// Forward opens the portforward subresource at path and forwards the
// ports until ctx ends or the connection to the pod is lost (then it
// returns "lost connection to pod", as kubectl).
func Forward(ctx context.Context, cfg *client.Config, path string, opts Options) error {
	ws, err := remotecommand.Dial(ctx, cfg, path, url.Values{}, pf.TunnelPrefix+pf.Protocol)
	if err != nil {
		return err
	}
	conn, err := pf.NewClient(newTunnel(ws))
	if err != nil {
		ws.Close()
		return err
	}
	var (
		listeners []net.Listener
		wg        sync.WaitGroup
	)
	// Listeners and the session go first; then the goroutines they ran end.
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
		_ = conn.Close()
		wg.Wait()
	}()
	addrs := opts.Addresses
	if len(addrs) == 0 {
		addrs = []string{"localhost"}
	}
	lost := make(chan struct{}, 1)
	for _, p := range opts.Ports {
		local := p.Local
		var any bool
		for _, a := range addrs {
			hosts := []string{a}
			if a == "localhost" {
				hosts = []string{"127.0.0.1", "::1"}
			}
			for _, h := range hosts {
				l, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(int(local))))
				if err != nil {
					if a == "localhost" {
						continue // one of the loopbacks is enough, as kubectl's
					}
					return fmt.Errorf("unable to listen on any of the requested ports: %v", opts.Ports)
				}
				any = true
				if local == 0 {
					local = uint16(l.Addr().(*net.TCPAddr).Port)
				}
				listeners = append(listeners, l)
				fmt.Fprintf(opts.Out, "Forwarding from %s -> %d\n", net.JoinHostPort(h, strconv.Itoa(int(local))), p.Remote)
				remote := p.Remote
				wg.Go(func() {
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						fmt.Fprintf(opts.Out, "Handling connection for %d\n", local)
						wg.Go(func() {
							if err := conn.Forward(c, remote); err != nil {
								fmt.Fprintf(opts.ErrOut, "E%s portforward.go] \"An error occurred forwarding\" err=%q localPort=%d remotePort=%d\n",
									time.Now().Format("0102 15:04:05.000000"), err.Error(), local, remote)
								select {
								case lost <- struct{}{}:
								default:
								}
							}
						})
					}
				})
			}
		}
		if !any {
			return fmt.Errorf("unable to listen on any of the requested ports: %v", opts.Ports)
		}
	}
	if opts.Ready != nil {
		close(opts.Ready)
	}
	select {
	case <-ctx.Done():
		return nil
	case <-conn.Done():
	case <-lost:
	}
	return errors.New("lost connection to pod")
}

// tunnel is a WebSocket as a byte stream: SPDY frames travel in binary
// messages (client-go's TunnelingConnection).
type tunnel struct {
	ws  *websocket.Conn
	mu  sync.Mutex // one writer at a time
	cur io.Reader
}

func newTunnel(ws *websocket.Conn) *tunnel { return &tunnel{ws: ws} }

func (t *tunnel) Read(p []byte) (int, error) {
	for {
		if t.cur == nil {
			typ, r, err := t.ws.NextReader()
			if err != nil {
				if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
					return 0, io.EOF
				}
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				continue
			}
			t.cur = r
		}
		n, err := t.cur.Read(p)
		if errors.Is(err, io.EOF) {
			t.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (t *tunnel) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (t *tunnel) Close() error {
	t.mu.Lock()
	_ = t.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	t.mu.Unlock()
	return t.ws.Close()
}

func (t *tunnel) LocalAddr() net.Addr  { return t.ws.LocalAddr() }
func (t *tunnel) RemoteAddr() net.Addr { return t.ws.RemoteAddr() }
func (t *tunnel) SetDeadline(d time.Time) error {
	return errors.Join(t.ws.SetReadDeadline(d), t.ws.SetWriteDeadline(d))
}
func (t *tunnel) SetReadDeadline(d time.Time) error  { return t.ws.SetReadDeadline(d) }
func (t *tunnel) SetWriteDeadline(d time.Time) error { return t.ws.SetWriteDeadline(d) }

var _ net.Conn = (*tunnel)(nil)
