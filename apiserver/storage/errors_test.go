package storage

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestTranslate(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	other := errors.New("boom")
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"nil", context.Background(), nil, nil},
		{"too large", context.Background(), rpctypes.ErrRequestTooLarge, ErrRequestTooLarge},
		{"grpc message too large", context.Background(), status.Error(codes.ResourceExhausted, "trying to send message larger than max"), ErrRequestTooLarge},
		{"no leader", context.Background(), rpctypes.ErrNoLeader, ErrUnavailable},
		{"etcd timeout", context.Background(), rpctypes.ErrTimeout, ErrUnavailable},
		{"grpc unavailable", context.Background(), status.Error(codes.Unavailable, "connection refused"), ErrUnavailable},
		{"request timeout", context.Background(), context.DeadlineExceeded, ErrUnavailable},
		{"future revision", context.Background(), rpctypes.ErrFutureRev, ErrFutureRevision},
		{"caller canceled", canceled, status.Error(codes.Canceled, "context canceled"), context.Canceled},
		{"other", context.Background(), other, other},
	}
	for _, tt := range tests {
		got := translate(tt.ctx, tt.err)
		if tt.want == nil {
			if got != nil {
				t.Errorf("%s: got %v, want nil", tt.name, got)
			}
			continue
		}
		if !errors.Is(got, tt.want) {
			t.Errorf("%s: translate(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
