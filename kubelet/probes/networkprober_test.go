package probes

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestWithNetworkProber: under WithNetworkProber, httpGet, tcpSocket and
// grpc probes are answered by the prober without dialing (the pod IP here
// is a closed loopback port: a dial would fail), exec probes still run.
func TestWithNetworkProber(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := int32(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	var asked []string
	ctx := WithNetworkProber(context.Background(), func(_ context.Context, p *api.Probe, tgt Target) error {
		switch {
		case p.HTTPGet != nil:
			asked = append(asked, "http")
		case p.TCPSocket != nil:
			asked = append(asked, "tcp")
			return errors.New("tcp says no")
		case p.GRPC != nil:
			asked = append(asked, "grpc")
		}
		return nil
	})
	num := api.IntOrString{Type: api.Int, IntVal: port}
	tgt := Target{PodIP: "127.0.0.1", ContainerID: "c", Container: &api.Container{}}
	if err := Run(ctx, nil, &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Port: num}}}, tgt); err != nil {
		t.Errorf("http: %v", err)
	}
	if err := Run(ctx, nil, &api.Probe{ProbeHandler: api.ProbeHandler{TCPSocket: &api.TCPSocketAction{Port: num}}}, tgt); err == nil || err.Error() != "tcp says no" {
		t.Errorf("tcp: %v", err)
	}
	if err := Run(ctx, nil, &api.Probe{ProbeHandler: api.ProbeHandler{GRPC: &api.GRPCAction{Port: port}}}, tgt); err != nil {
		t.Errorf("grpc: %v", err)
	}
	if err := Run(ctx, fakeExec{3, "exec ran"}, &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"x"}}}}, tgt); err == nil || err.Error() != "exec ran" {
		t.Errorf("exec under a network prober must still run in the container: %v", err)
	}
	if len(asked) != 3 {
		t.Errorf("prober asked %q", asked)
	}
	// Without it, the same http probe dials and fails.
	if err := Run(context.Background(), nil, &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Port: num}}}, tgt); err == nil {
		t.Error("http probe of a closed port succeeded without a network prober")
	}
}
