package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/minik8s/minik8s/api"
)

// runGRPC performs a gRPC probe as kube's kubelet does (pkg/probe/grpc):
// grpc.health.v1.Health/Check on the pod's IP and the probe's port, the
// probe's service name ("" when unset), plaintext unless the mode is TLS
// (then without certificate checks), user agent kube-probe/MAJOR.MINOR;
// only SERVING is a success. ctx carries the probe's timeout.
func runGRPC(ctx context.Context, g *api.GRPCAction, podIP string, timeout time.Duration) error {
	service := ""
	if g.Service != nil {
		service = *g.Service
	}
	creds := insecure.NewCredentials()
	if g.Mode != nil && *g.Mode == api.GRPCProbeModeTLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	addr := net.JoinHostPort(podIP, strconv.Itoa(int(g.Port)))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithUserAgent(probeUserAgent),
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", a)
		}))
	if err != nil {
		return fmt.Errorf("error: failed to connect service at %q: %w", addr, err)
	}
	defer conn.Close()
	// WaitForReady makes the call wait for the connection like kube's
	// blocking dial, so a refused connection is retried until the timeout.
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		st, _ := status.FromError(err)
		switch {
		case st.Code() == codes.Unimplemented:
			return fmt.Errorf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
		case st.Code() == codes.DeadlineExceeded || errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("timeout: health rpc did not complete within %v", timeout)
		}
		return fmt.Errorf("error: health rpc probe failed: %w", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return nil
}
