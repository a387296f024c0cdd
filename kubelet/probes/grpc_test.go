package probes

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/minik8s/minik8s/api"
)

// TestRunGRPC runs gRPC probes against a grpc.health.v1 server, as the
// conformance specs "should (not) be restarted with a GRPC liveness probe"
// do against agnhost grpc-health-checking.
func TestRunGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var agents = make(chan string, 16)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		select {
		case agents <- strings.Join(md.Get("user-agent"), ","):
		default:
		}
		return h(ctx, req)
	}))
	hs := health.NewServer() // "" is SERVING
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	port := int32(ln.Addr().(*net.TCPAddr).Port)

	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := int32(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()

	down, unknown := "down", "nope"
	for _, tc := range []struct {
		name    string
		action  api.GRPCAction
		wantErr string
	}{
		{"default service serving", api.GRPCAction{Port: port}, ""},
		{"named service not serving", api.GRPCAction{Port: port, Service: &down}, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", api.GRPCAction{Port: port, Service: &unknown}, "error: health rpc probe failed"},
		{"nothing listening", api.GRPCAction{Port: closedPort}, "timeout: health rpc did not complete within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.action
			err := Run(context.Background(), nil, &api.Probe{ProbeHandler: api.ProbeHandler{GRPC: &a}, TimeoutSeconds: 1}, Target{PodIP: "127.0.0.1"})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("probe failed: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("probe error = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if ua := <-agents; !strings.HasPrefix(ua, "kube-probe/1.37") {
		t.Errorf("user agent = %q, want kube-probe/1.37", ua)
	}
}
