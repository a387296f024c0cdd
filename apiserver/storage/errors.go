package storage

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("key not found")
	// ErrKeyExists: Create found the key already there.
	ErrKeyExists = errors.New("key already exists")
	// ErrRequestTooLarge: etcd (or the gRPC transport in front of it)
	// refused a request larger than its limit.
	ErrRequestTooLarge = errors.New("request is too large")
	// ErrUnavailable: etcd did not answer in time, has no leader, or the
	// connection is gone. The write may or may not have happened.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrFutureRevision: a read asked for a revision etcd has not reached.
	ErrFutureRevision = errors.New("required revision is a future revision")
)

// ConflictError is a failed Update or Delete precondition: the key's
// ModRevision was not the expected one. Current is the key's state when the
// transaction ran.
type ConflictError struct {
	Key      string
	Expected int64
	Current  KV
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict on %q: expected revision %d, current revision %d", e.Key, e.Expected, e.Current.ModRevision)
}

// CompactedError is a read or watch at a revision etcd has compacted away.
// CompactRevision is the oldest revision still available (0 if unknown).
type CompactedError struct {
	Revision        int64
	CompactRevision int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("revision %d has been compacted (compact revision %d)", e.Revision, e.CompactRevision)
}

// translate turns an etcd client error into the package's errors. The
// original error stays in the chain for logs.
func translate(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		status.Code(err) == codes.Canceled || status.Code(err) == codes.DeadlineExceeded) {
		// The caller's context ended: report that, not an etcd failure.
		return ctxErr
	}
	switch {
	case errors.Is(err, rpctypes.ErrRequestTooLarge), errors.Is(err, rpctypes.ErrGRPCRequestTooLarge),
		status.Code(err) == codes.ResourceExhausted:
		return fmt.Errorf("%w: %v", ErrRequestTooLarge, err)
	case errors.Is(err, rpctypes.ErrFutureRev), errors.Is(err, rpctypes.ErrGRPCFutureRev):
		return fmt.Errorf("%w: %v", ErrFutureRevision, err)
	case errors.Is(err, rpctypes.ErrNoLeader), errors.Is(err, rpctypes.ErrLeaderChanged),
		errors.Is(err, rpctypes.ErrTimeout), errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost), errors.Is(err, rpctypes.ErrTimeoutWaitAppliedIndex),
		errors.Is(err, rpctypes.ErrStopped),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		status.Code(err) == codes.Unavailable, status.Code(err) == codes.DeadlineExceeded:
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}
