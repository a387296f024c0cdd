package httpstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// RemoteCommandProtocolV4 is the SPDY remote command protocol served: the
// error stream carries a JSON Status (client-go offers it first).
const RemoteCommandProtocolV4 = "v4.channel.k8s.io"

// Stream types of the remote command protocol.
const (
	streamTypeStdin  = "stdin"
	streamTypeStdout = "stdout"
	streamTypeStderr = "stderr"
	streamTypeResize = "resize"
)

// IsSPDYUpgrade tells a request asking for a SPDY/3.1 upgrade.
func IsSPDYUpgrade(r *http.Request) bool {
	return httpstream.IsUpgradeRequest(r) && r.Header.Get(httpstream.HeaderUpgrade) == spdy.HeaderSpdy31
}

// TerminalSize is a resize message ({"Width":W,"Height":H}).
type TerminalSize struct {
	Width, Height uint16
}

// RemoteCommandOptions are the streams the client asked for.
type RemoteCommandOptions struct {
	Stdin, Stdout, Stderr, TTY bool
}

// RemoteCommand runs a session with the client's streams (nil: not
// asked for) and returns the Status, JSON, for the error stream.
type RemoteCommand func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) []byte

// ServeRemoteCommand upgrades to SPDY (v4.channel.k8s.io), waits for the
// client's streams (30 s, as the kubelet), runs run and reports its Status
// on the error stream. A request that cannot be upgraded is answered with
// the reason.
func ServeRemoteCommand(ctx context.Context, w http.ResponseWriter, r *http.Request, opts RemoteCommandOptions, run RemoteCommand) error {
	if _, err := httpstream.Handshake(r, w, []string{RemoteCommandProtocolV4}); err != nil {
		return err // Handshake has answered
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	streams := make(chan httpstream.Stream, 5)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		select {
		case streams <- s:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if conn == nil {
		return fmt.Errorf("unable to upgrade to SPDY")
	}
	defer conn.Close()
	conn.SetIdleTimeout(DefaultIdleTimeout)

	var errS, stdinS, stdoutS, stderrS, resizeS httpstream.Stream
	want := 1
	if opts.Stdin {
		want++
	}
	if opts.Stdout {
		want++
	}
	if opts.Stderr && !opts.TTY {
		want++
	}
	if opts.TTY {
		want++
	}
	timeout := time.NewTimer(streamCreationTimeout)
	defer timeout.Stop()
	for got := 0; got < want; {
		select {
		case s := <-streams:
			switch s.Headers().Get(headerStreamType) {
			case streamTypeError:
				errS = s
			case streamTypeStdin:
				stdinS = s
			case streamTypeStdout:
				stdoutS = s
			case streamTypeStderr:
				stderrS = s
			case streamTypeResize:
				resizeS = s
			default:
				_ = s.Reset()
				continue
			}
			got++
		case <-timeout.C:
			return fmt.Errorf("timed out waiting for client to create streams")
		case <-conn.CloseChan():
			return fmt.Errorf("client closed the connection before creating its streams")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var (
		stdin          io.Reader
		stdout, stderr io.Writer
		resize         chan TerminalSize
	)
	if stdinS != nil {
		stdin = stdinS
	}
	if stdoutS != nil {
		stdout = stdoutS
	}
	if stderrS != nil {
		stderr = stderrS
	}
	if resizeS != nil {
		resize = make(chan TerminalSize, 4)
		go func() {
			defer close(resize)
			dec := json.NewDecoder(resizeS)
			for {
				var sz TerminalSize
				if dec.Decode(&sz) != nil {
					return
				}
				select {
				case resize <- sz:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		// The client going away ends the session.
		select {
		case <-conn.CloseChan():
			cancel()
		case <-ctx.Done():
		}
	}()
	status := run(ctx, stdin, stdout, stderr, resize)
	if errS != nil {
		_, _ = errS.Write(status)
		_ = errS.Close()
	}
	for _, s := range []httpstream.Stream{stdoutS, stderrS} {
		if s != nil {
			_ = s.Close()
		}
	}
	return nil
}
