package server_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// dialAPIServer opens a WebSocket to the apiserver at path?query as the
// conformance suite does (golang.org/x/net/websocket, e2ewebsocket's
// OpenWebSocketForURL), with the admin's credentials.
func (e *env) dialAPIServer(t *testing.T, path string, q url.Values, protocols ...string) *websocket.Conn {
	t.Helper()
	u, err := url.Parse(e.adminCC.Host)
	if err != nil {
		t.Fatal(err)
	}
	u.Scheme, u.Path, u.RawQuery = "wss", path, q.Encode()
	cfg, err := websocket.NewConfig(u.String(), "http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Protocol = protocols
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(e.adminCC.CAData)
	cfg.TlsConfig = &tls.Config{RootCAs: roots, ServerName: e.adminCC.ServerName, MinVersion: tls.VersionTLS12}
	if len(e.adminCC.CertData) > 0 {
		cert, err := tls.X509KeyPair(e.adminCC.CertData, e.adminCC.KeyData)
		if err != nil {
			t.Fatal(err)
		}
		cfg.TlsConfig.Certificates = []tls.Certificate{cert}
	}
	if e.adminCC.BearerToken != "" {
		cfg.Header.Set("Authorization", "Bearer "+e.adminCC.BearerToken)
	}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("open websocket to %s: %v", u, err)
	}
	t.Cleanup(func() { ws.Close() })
	_ = ws.SetDeadline(time.Now().Add(30 * time.Second))
	return ws
}

// readAll reads messages until the server closes.
func readAll(t *testing.T, ws *websocket.Conn) [][]byte {
	t.Helper()
	var msgs [][]byte
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			if err == io.EOF {
				return msgs
			}
			t.Fatalf("read completely from the websocket: %v (got %q)", err, msgs)
		}
		msgs = append(msgs, msg)
	}
}

// TestExecOverWebSocketAsConformance is "[sig-node] Pods should support
// remote command execution over websockets": the old channel protocols
// through the apiserver, the exec output on channel 1 and nothing on the
// error channel on success, the server closing after the command.
func TestExecOverWebSocketAsConformance(t *testing.T) {
	e := setup(t)
	e.pod(t, "shell", "node-k", "main")
	path := "/api/v1/namespaces/default/pods/shell/exec"
	q := url.Values{"stderr": {"1"}, "stdout": {"1"}, "container": {"main"}, "command": {"echo", "remote execution test"}}

	t.Run("channel.k8s.io", func(t *testing.T) {
		ws := e.dialAPIServer(t, path, q, "channel.k8s.io")
		if got := ws.Config().Protocol; len(got) != 1 || got[0] != "channel.k8s.io" {
			t.Errorf("negotiated %q", got)
		}
		var stdout bytes.Buffer
		for _, msg := range readAll(t, ws) {
			if len(msg) == 0 {
				continue
			}
			if msg[0] != 1 {
				if len(msg) == 1 {
					continue // an empty message on another stream
				}
				t.Fatalf("message from the server not on channel 1 (stdout): %q", msg)
			}
			stdout.Write(msg[1:])
		}
		if !strings.Contains(stdout.String(), "remote execution test") {
			t.Errorf("stdout %q", stdout.String())
		}
	})
	t.Run("base64.channel.k8s.io", func(t *testing.T) {
		// The client's first choice it gets, base64 framed.
		ws := e.dialAPIServer(t, path, q, "base64.channel.k8s.io", "channel.k8s.io")
		if got := ws.Config().Protocol; len(got) != 1 || got[0] != "base64.channel.k8s.io" {
			t.Errorf("negotiated %q", got)
		}
		var stdout bytes.Buffer
		for _, msg := range readAll(t, ws) {
			if len(msg) == 0 || msg[0] != '1' {
				t.Fatalf("message %q, want channel '1'", msg)
			}
			b, err := base64.StdEncoding.DecodeString(string(msg[1:]))
			if err != nil {
				t.Fatalf("message %q: %v", msg, err)
			}
			stdout.Write(b)
		}
		if !strings.Contains(stdout.String(), "remote execution test") {
			t.Errorf("stdout %q", stdout.String())
		}
	})
	t.Run("failure message on the error channel", func(t *testing.T) {
		ws := e.dialAPIServer(t, path, url.Values{"stdout": {"1"}, "stderr": {"1"}, "container": {"main"}, "command": {"fail", "3"}}, "channel.k8s.io")
		var errs string
		for _, msg := range readAll(t, ws) {
			if len(msg) > 0 && msg[0] == 3 {
				errs += string(msg[1:])
			}
		}
		if want := "command terminated with non-zero exit code: error executing command [fail 3], exit code 3"; errs != want {
			t.Errorf("error channel %q, want %q", errs, want)
		}
	})
}

// TestLogsOverWebSocketAsConformance is "[sig-node] Pods should support
// retrieving logs from the container over websockets": binary.k8s.io (or
// its base64 form) carries the raw log, and the server closes at its end.
func TestLogsOverWebSocketAsConformance(t *testing.T) {
	e := setup(t)
	p := e.pod(t, "logger", "node-k", "main")
	writeCRI(t, e.logFile(p, "main", 0), "container is alive")
	path := "/api/v1/namespaces/default/pods/logger/log"
	q := url.Values{"container": {"main"}}

	t.Run("binary.k8s.io", func(t *testing.T) {
		ws := e.dialAPIServer(t, path, q, "binary.k8s.io")
		var buf bytes.Buffer
		for _, msg := range readAll(t, ws) {
			if len(strings.TrimSpace(string(msg))) == 0 {
				continue
			}
			buf.Write(msg)
		}
		if buf.String() != "container is alive\n" {
			t.Errorf("websocket logs %q", buf.String())
		}
	})
	t.Run("base64.binary.k8s.io", func(t *testing.T) {
		ws := e.dialAPIServer(t, path, q, "base64.binary.k8s.io")
		var buf bytes.Buffer
		for _, msg := range readAll(t, ws) {
			b, err := base64.StdEncoding.DecodeString(string(msg))
			if err != nil {
				t.Fatalf("message %q: %v", msg, err)
			}
			buf.Write(b)
		}
		if buf.String() != "container is alive\n" {
			t.Errorf("websocket logs %q", buf.String())
		}
	})
}
