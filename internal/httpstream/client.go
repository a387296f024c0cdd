package httpstream

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// Client is the client end of a port-forward connection: one SPDY session
// over an upgraded connection, carrying any number of forwarded
// connections.
type Client struct {
	conn   httpstream.Connection
	nextID atomic.Int64
}

// NewClient starts a SPDY client session on c, a connection the server
// has upgraded (SPDY/3.1 directly or tunneled in WebSocket messages).
func NewClient(c net.Conn) (*Client, error) {
	conn, err := spdy.NewClientConnection(c)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	return &Client{conn: conn}, nil
}

// Close ends the session and every forwarded connection.
func (c *Client) Close() error { return c.conn.Close() }

// Done is closed when the session ends.
func (c *Client) Done() <-chan bool { return c.conn.CloseChan() }

// RemoteError is what the server reported on a pair's error stream.
type RemoteError struct{ Message string }

func (e *RemoteError) Error() string { return e.Message }

// Forward carries local to port in the pod until either side is done. It
// returns the server's report (*RemoteError) if forwarding failed there.
func (c *Client) Forward(local io.ReadWriteCloser, port uint16) error {
	id := strconv.FormatInt(c.nextID.Add(1)-1, 10)
	h := http.Header{}
	h.Set(headerStreamType, streamTypeError)
	h.Set(headerPort, strconv.Itoa(int(port)))
	h.Set(headerRequestID, id)
	errs, err := c.conn.CreateStream(h)
	if err != nil {
		return fmt.Errorf("error creating error stream for port %d: %w", port, err)
	}
	// Nothing is sent on the error stream.
	_ = errs.Close()
	defer c.conn.RemoveStreams(errs)
	remoteErr := make(chan error, 1)
	go func() {
		msg, err := io.ReadAll(errs)
		switch {
		case err != nil:
			remoteErr <- fmt.Errorf("error reading from error stream for port %d: %w", port, err)
		case len(msg) > 0:
			remoteErr <- &RemoteError{Message: string(msg)}
		default:
			remoteErr <- nil
		}
	}()
	h.Set(headerStreamType, streamTypeData)
	data, err := c.conn.CreateStream(h)
	if err != nil {
		return fmt.Errorf("error creating forwarding stream for port %d: %w", port, err)
	}
	defer c.conn.RemoveStreams(data)
	localErr := make(chan struct{})
	remoteDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(local, data)
		close(remoteDone)
	}()
	go func() {
		defer data.Close() // tells the server nothing more comes
		if _, err := io.Copy(data, local); err != nil {
			close(localErr)
		}
	}()
	select {
	case <-remoteDone:
	case <-localErr:
	}
	err = <-remoteErr
	_ = data.Reset()
	_ = local.Close()
	return err
}
