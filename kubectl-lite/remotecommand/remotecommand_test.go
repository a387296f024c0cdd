package remotecommand

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// fakeKubelet speaks the server side of the exec protocol: "cat" echoes
// stdin to stdout until the stdin channel is closed (v5) or a newline
// arrives (v4); "fail N" writes to stderr and exits with N; "resize" echoes
// the first resize message; "boom" fails without an exit code.
type fakeKubelet struct {
	t         *testing.T
	protocols []string
	gotQuery  chan url.Values
}

func (f *fakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/refused/exec") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: api.StatusFailure,
			Reason: api.StatusReasonServiceUnavailable, Code: 503, Message: "the kubelet of node n1 is unreachable"})
		return
	}
	up := websocket.Upgrader{Subprotocols: f.protocols}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		f.t.Errorf("upgrade: %v", err)
		return
	}
	defer conn.Close()
	if f.gotQuery != nil {
		f.gotQuery <- r.URL.Query()
	}
	v5 := conn.Subprotocol() == ProtocolV5
	send := func(ch byte, data []byte) {
		conn.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, data...))
	}
	status := func(st api.Status) {
		b, _ := json.Marshal(st)
		send(ErrorChannel, b)
		conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	}
	cmd := r.URL.Query()["command"]
	// Real servers open with an empty frame per channel; the client must
	// ignore them.
	send(StdoutChannel, nil)
	send(StderrChannel, nil)
	switch cmd[0] {
	case "cat":
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if msg[0] == CloseChannel && msg[1] == StdinChannel {
				break
			}
			if msg[0] == StdinChannel {
				send(StdoutChannel, msg[1:])
				if !v5 && bytes.HasSuffix(msg[1:], []byte("\n")) {
					break
				}
			}
		}
		status(api.Status{Status: api.StatusSuccess})
	case "fail":
		send(StderrChannel, []byte("oops\n"))
		status(api.Status{Status: api.StatusFailure, Reason: "NonZeroExitCode", Message: "command terminated with non-zero exit code: exit status " + cmd[1],
			Details: &api.StatusDetails{Causes: []api.StatusCause{{Type: "ExitCode", Message: cmd[1]}}}})
	case "resize":
		_, msg, err := conn.ReadMessage()
		if err != nil || msg[0] != ResizeChannel {
			f.t.Errorf("resize: got %v %v", msg, err)
			return
		}
		send(StdoutChannel, msg[1:])
		status(api.Status{Status: api.StatusSuccess})
	case "boom":
		status(api.Status{Status: api.StatusFailure, Reason: api.StatusReasonInternalError, Message: `container "c" not found`})
	}
}

func start(t *testing.T, protocols ...string) (*httptest.Server, *fakeKubelet) {
	f := &fakeKubelet{t: t, protocols: protocols, gotQuery: make(chan url.Values, 1)}
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return s, f
}

func query(cmd ...string) url.Values {
	q := url.Values{"stdout": {"true"}, "stderr": {"true"}, "container": {"c"}}
	for _, c := range cmd {
		q.Add("command", c)
	}
	return q
}

func TestExec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		protocols []string
		cmd       []string
		stdin     string
		resize    *Size
		wantOut   string
		wantErr   string
		wantCode  int
		wantProto string
	}{
		{name: "v5 stdin to stdout, closed at EOF", protocols: []string{ProtocolV5, ProtocolV4}, cmd: []string{"cat"}, stdin: "hello\nworld\n", wantOut: "hello\nworld\n"},
		{name: "v4 fallback", protocols: []string{ProtocolV4}, cmd: []string{"cat"}, stdin: "line\n", wantOut: "line\n"},
		{name: "exit code", protocols: []string{ProtocolV5}, cmd: []string{"fail", "3"}, wantCode: 3, wantErr: "oops\n"},
		{name: "failure without exit code", protocols: []string{ProtocolV5}, cmd: []string{"boom"}},
		{name: "resize", protocols: []string{ProtocolV5}, cmd: []string{"resize"}, resize: &Size{Width: 80, Height: 24}, wantOut: `{"Width":80,"Height":24}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, f := start(t, tt.protocols...)
			var out, errOut bytes.Buffer
			opts := Options{Stdout: &out, Stderr: &errOut}
			if tt.stdin != "" {
				opts.Stdin = strings.NewReader(tt.stdin)
			}
			if tt.resize != nil {
				ch := make(chan Size, 1)
				ch <- *tt.resize
				opts.Resize = ch
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Exec(ctx, &client.Config{Host: s.URL}, "/api/v1/namespaces/default/pods/p/exec", query(tt.cmd...), opts)
			q := <-f.gotQuery
			if got := q["command"]; strings.Join(got, " ") != strings.Join(tt.cmd, " ") {
				t.Errorf("server got command %v", got)
			}
			var ee *ExitError
			switch {
			case tt.wantCode != 0:
				if !errors.As(err, &ee) || ee.Code != tt.wantCode || ee.Error() != "command terminated with exit code 3" {
					t.Errorf("err = %v, want exit code %d", err, tt.wantCode)
				}
			case tt.cmd[0] == "boom":
				if err == nil || err.Error() != `error executing remote command: container "c" not found` {
					t.Errorf("err = %v", err)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			}
			if out.String() != tt.wantOut || errOut.String() != tt.wantErr {
				t.Errorf("stdout %q stderr %q, want %q %q", out.String(), errOut.String(), tt.wantOut, tt.wantErr)
			}
		})
	}
}

func TestExecRefused(t *testing.T) {
	t.Parallel()
	s, _ := start(t, ProtocolV5)
	err := Exec(context.Background(), &client.Config{Host: s.URL}, "/api/v1/namespaces/default/pods/refused/exec", query("ls"), Options{})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.Status().Reason != api.StatusReasonServiceUnavailable || se.Error() != "the kubelet of node n1 is unreachable" {
		t.Errorf("err = %#v", err)
	}
}

func TestExecCancel(t *testing.T) {
	t.Parallel()
	s, _ := start(t, ProtocolV5)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		done <- Exec(ctx, &client.Config{Host: s.URL}, "/exec", query("cat"), Options{Stdin: pr, Stdout: io.Discard})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Exec did not return after cancel")
	}
}

func TestWSURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ host, want string }{
		{"https://10.0.0.1:6443", "wss://10.0.0.1:6443/x?a=1"},
		{"http://127.0.0.1:8080/base/", "ws://127.0.0.1:8080/base/x?a=1"},
		{"10.0.0.1:6443", "wss://10.0.0.1:6443/x?a=1"},
	} {
		got, err := wsURL(tt.host, "/x", url.Values{"a": {"1"}})
		if err != nil || got != tt.want {
			t.Errorf("wsURL(%q) = %q, %v; want %q", tt.host, got, err, tt.want)
		}
	}
}
