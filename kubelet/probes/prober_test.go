package probes

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

type fakeExec struct {
	code int
	out  string
}

func (f fakeExec) Exec(_ context.Context, _ string, _ []string, stdout, _ io.Writer) (int, error) {
	_, _ = io.WriteString(stdout, f.out)
	return f.code, nil
}

func TestRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.WriteHeader(500)
		}
		if r.Header.Get("User-Agent") != "kube-probe/1.37" {
			w.WriteHeader(400)
		}
	}))
	defer srv.Close()
	host, portStr, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(portStr)
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	c := &api.Container{Ports: []api.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	num := func(p int) api.IntOrString { return api.IntOrString{Type: api.Int, IntVal: int32(p)} }
	tests := []struct {
		name    string
		ex      Execer
		h       api.ProbeHandler
		wantErr string
	}{
		{"exec ok", fakeExec{0, ""}, api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"true"}}}, ""},
		{"exec fails", fakeExec{1, "not healthy\n"}, api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"false"}}}, "not healthy"},
		{"http ok", nil, api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/ok", Port: num(port)}}, ""},
		{"http named port", nil, api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "ok", Port: api.IntOrString{Type: api.String, StrVal: "http"}}}, ""},
		{"http 500", nil, api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/bad", Port: num(port)}}, "HTTP probe failed with statuscode: 500"},
		{"unknown port name", nil, api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Port: api.IntOrString{Type: api.String, StrVal: "nope"}}}, "couldn't find port: nope"},
		{"tcp ok", nil, api.ProbeHandler{TCPSocket: &api.TCPSocketAction{Port: num(port)}}, ""},
		{"tcp refused", nil, api.ProbeHandler{TCPSocket: &api.TCPSocketAction{Port: num(closedPort)}}, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.ex, &api.Probe{ProbeHandler: tt.h, TimeoutSeconds: 2}, Target{PodIP: host, ContainerID: "c", Container: c})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
