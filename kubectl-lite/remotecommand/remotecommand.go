package remotecommand

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// Subprotocols, newest first, as the client offers them.
const (
	ProtocolV5 = "v5.channel.k8s.io"
	ProtocolV4 = "v4.channel.k8s.io"
)

// Channels of the protocol.
const (
	StdinChannel  byte = 0
	StdoutChannel byte = 1
	StderrChannel byte = 2
	ErrorChannel  byte = 3
	ResizeChannel byte = 4
	CloseChannel  byte = 255
)

// Size is a terminal size, sent on the resize channel.
type Size struct {
	Width  uint16 `json:"Width"`
	Height uint16 `json:"Height"`
}

// Options are the streams of one exec session. Nil streams are not
// attached. Resize, when set, delivers terminal size changes.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	TTY    bool
	Resize <-chan Size
}

// ExitError is a remote command that ended with a non-zero exit code.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("command terminated with exit code %d", e.Code)
}

// Exec opens path (an .../exec URL path with its query) on the server of
// cfg and streams until the remote command ends. It returns nil on
// success, *ExitError for a non-zero exit code, a *apierrors.StatusError
// when the server refuses the request, or another error.
func Exec(ctx context.Context, cfg *client.Config, path string, query url.Values, opts Options) error {
	conn, err := Dial(ctx, cfg, path, query, ProtocolV5, ProtocolV4)
	if err != nil {
		return err
	}
	defer conn.Close()
	s := &session{conn: conn, v5: conn.Subprotocol() == ProtocolV5}
	return s.run(ctx, opts)
}

// Dial opens a WebSocket to path (with its query) on the server of cfg,
// offering subprotocols, with the client's credentials. A refused upgrade
// is the server's Status error.
func Dial(ctx context.Context, cfg *client.Config, path string, query url.Values, subprotocols ...string) (*websocket.Conn, error) {
	u, err := wsURL(cfg.Host, path, query)
	if err != nil {
		return nil, err
	}
	tc, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  tc,
		HandshakeTimeout: 30 * time.Second,
		Subprotocols:     subprotocols,
	}
	h := http.Header{}
	if cfg.BearerToken != "" {
		h.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	if cfg.UserAgent != "" {
		h.Set("User-Agent", cfg.UserAgent)
	}
	cfg.Impersonate.SetHeaders(h)
	conn, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			return nil, handshakeError(resp, err)
		}
		return nil, fmt.Errorf("dial %s: %w", redact(u), err)
	}
	return conn, nil
}

func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}

// handshakeError turns a refused upgrade into the server's Status error.
func handshakeError(resp *http.Response, err error) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var st api.Status
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		return apierrors.FromStatus(st)
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = fmt.Sprintf("unable to upgrade connection: %v (%s)", err, resp.Status)
	}
	return apierrors.FromStatus(api.Status{Status: api.StatusFailure, Code: int32(resp.StatusCode), Message: msg,
		Reason: apierrors.ReasonForCode(resp.StatusCode, http.MethodGet)})
}

func wsURL(host, path string, query url.Values) (string, error) {
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return "", fmt.Errorf("exec: bad server URL %q: %w", host, err)
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	case "http":
		u.Scheme = "ws"
	default:
		return "", fmt.Errorf("exec: unsupported scheme %q", u.Scheme)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	return u.String(), nil
}

// tlsConfig mirrors the REST client's verification: the cluster CA (or the
// system roots), the client certificate, and insecure only when asked.
func tlsConfig(cfg *client.Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName,
		InsecureSkipVerify: cfg.Insecure} //nolint:gosec // only when the kubeconfig says so
	if len(cfg.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CAData) {
			return nil, errors.New("exec: certificate authority data contains no PEM certificate")
		}
		tc.RootCAs = pool
	}
	if len(cfg.CertData) > 0 && len(cfg.KeyData) > 0 {
		cert, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
		if err != nil {
			return nil, fmt.Errorf("exec: client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

type session struct {
	conn *websocket.Conn
	v5   bool
	wmu  sync.Mutex
}

func (s *session) write(channel byte, data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	msg := make([]byte, 1+len(data))
	msg[0] = channel
	copy(msg[1:], data)
	return s.conn.WriteMessage(websocket.BinaryMessage, msg)
}

func (s *session) run(ctx context.Context, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		// Unblock the reader when the caller gives up.
		s.conn.SetReadDeadline(time.Now())
	}()
	if opts.Stdin != nil {
		go s.pumpStdin(opts.Stdin)
	}
	if opts.Resize != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case sz, ok := <-opts.Resize:
					if !ok {
						return
					}
					b, _ := json.Marshal(sz)
					if s.write(ResizeChannel, b) != nil {
						return
					}
				}
			}
		}()
	}
	for {
		typ, msg, err := s.conn.ReadMessage()
		if err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("exec: read: %w", err)
		}
		if typ != websocket.BinaryMessage || len(msg) == 0 {
			continue
		}
		data := msg[1:]
		switch msg[0] {
		case StdoutChannel:
			if opts.Stdout != nil {
				if _, err := opts.Stdout.Write(data); err != nil {
					return fmt.Errorf("exec: write stdout: %w", err)
				}
			}
		case StderrChannel:
			if opts.Stderr != nil {
				if _, err := opts.Stderr.Write(data); err != nil {
					return fmt.Errorf("exec: write stderr: %w", err)
				}
			}
		case ErrorChannel:
			if len(data) == 0 {
				continue
			}
			return statusResult(data)
		}
	}
}

// pumpStdin copies stdin to channel 0 and, in v5, closes the channel at
// EOF so the remote command sees end of input.
func (s *session) pumpStdin(in io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if s.write(StdinChannel, buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			if s.v5 {
				s.write(CloseChannel, []byte{StdinChannel})
			}
			return
		}
	}
}

// statusResult reads the error channel's Status: Success, a non-zero exit
// code, or a failure message.
func statusResult(data []byte) error {
	var st api.Status
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("error executing remote command: %s", strings.TrimSpace(string(data)))
	}
	if st.Status == api.StatusSuccess {
		return nil
	}
	if st.Reason == "NonZeroExitCode" && st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == "ExitCode" {
				code, err := strconv.Atoi(c.Message)
				if err != nil {
					return fmt.Errorf("error executing remote command: bad exit code %q", c.Message)
				}
				return &ExitError{Code: code}
			}
		}
	}
	return fmt.Errorf("error executing remote command: %s", st.Message)
}
