package httpstream_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/httpstream"
)

// upgrade asks srv for a SPDY port-forward session over a raw connection,
// as kubectl's SPDY dialer does, and returns the client end.
func upgrade(t *testing.T, srv *httptest.Server) *httpstream.Client {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /portForward/ns/pod HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: %s\r\n%s: %s\r\n\r\n",
		httpstream.UpgradeSPDY, httpstream.HeaderProtocolVersion, httpstream.Protocol)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get(httpstream.HeaderProtocolVersion) != httpstream.Protocol {
		t.Fatalf("upgrade: %s %v", resp.Status, resp.Header)
	}
	pc, err := httpstream.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// TestForward carries connections to an echo server and reports a refused
// port on the error stream with the configured prefix.
func TestForward(t *testing.T) {
	t.Parallel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c) // until the client's half-close
				_, _ = c.Write([]byte("echo:" + string(b)))
			}()
		}
	}()
	echoPort := uint16(echo.Addr().(*net.TCPAddr).Port)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := uint16(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpstream.ServePortForward(r.Context(), w, r, httpstream.PortForwardOptions{
			Dial: func(ctx context.Context, port uint16) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
			},
			ErrorPrefix: func(port uint16) string { return fmt.Sprintf("error forwarding port %d to pod sb, uid ", port) },
		})
	}))
	defer srv.Close()
	pc := upgrade(t, srv)

	// Local connections, several at once on one session, each with its
	// half-close passed on: the answer comes after it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _ = pc.Forward(c, echoPort) }()
		}
	}()
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			msg := fmt.Sprintf("ping %d", i)
			_, _ = c.Write([]byte(msg))
			_ = c.(*net.TCPConn).CloseWrite()
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(c)
			if err != nil || string(got) != "echo:"+msg {
				t.Errorf("connection %d through the forward: %q, %v", i, got, err)
			}
		})
	}
	wg.Wait()

	local, remote := net.Pipe()
	defer local.Close()
	err = pc.Forward(remote, closedPort)
	var re *httpstream.RemoteError
	want := fmt.Sprintf("error forwarding port %d to pod sb, uid : dial tcp 127.0.0.1:%d: connect: connection refused", closedPort, closedPort)
	if !errors.As(err, &re) || re.Message != want {
		t.Errorf("closed port: %v, want %q", err, want)
	}
}

// TestServeRefusesBadUpgrades answers as the kubelet: 400 without the
// protocol header, 403 with an unknown protocol.
func TestServeRefusesBadUpgrades(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpstream.ServePortForward(r.Context(), w, r, httpstream.PortForwardOptions{})
	}))
	defer srv.Close()
	for _, tc := range []struct {
		proto string
		code  int
		msg   string
	}{
		{"", http.StatusBadRequest, "unable to upgrade: header X-Stream-Protocol-Version does not exist in request"},
		{"portforward.k8s.io.v2", http.StatusForbidden, "unable to upgrade: unable to negotiate protocol"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", httpstream.UpgradeSPDY)
		if tc.proto != "" {
			req.Header.Set(httpstream.HeaderProtocolVersion, tc.proto)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.msg) {
			t.Errorf("protocol %q: %d %q", tc.proto, resp.StatusCode, b)
		}
	}
}
