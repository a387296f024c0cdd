package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultRequestTimeout bounds each read and write, so a lost etcd turns
// into ErrUnavailable instead of a request hanging forever.
const DefaultRequestTimeout = 30 * time.Second

// KV is one key's value at a revision. Key is relative to the store prefix.
type KV struct {
	Key            string
	Value          []byte
	ModRevision    int64
	CreateRevision int64
}

// ListOptions select one page of a list.
type ListOptions struct {
	// Limit is the page size (0: everything).
	Limit int64
	// StartKey is the first key of the page (relative, inside the listed
	// prefix): the last key of the previous page followed by "\x00".
	StartKey string
	// Revision reads a snapshot at that revision (0: the latest). Reading a
	// compacted revision fails with *CompactedError.
	Revision int64
}

// ListResult is one page of a list.
type ListResult struct {
	// KVs are sorted by key.
	KVs []KV
	// Revision is the revision the page was read at: the store revision
	// for a latest read, ListOptions.Revision for a snapshot read.
	Revision int64
	// More reports keys left after this page; RemainingCount how many.
	More           bool
	RemainingCount int64
}

// Store is the byte-level store. It is safe for concurrent use.
type Store struct {
	client *clientv3.Client
	// prefix is the etcd key prefix with its trailing slash ("/registry/"),
	// or "" for none.
	prefix  string
	timeout time.Duration
}

// Option changes a Store's defaults.
type Option func(*Store)

// WithRequestTimeout bounds each read and write (default DefaultRequestTimeout).
func WithRequestTimeout(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// New returns a store keeping its keys under prefix (e.g. "/registry").
func New(c *clientv3.Client, prefix string, opts ...Option) *Store {
	p := strings.TrimSuffix(prefix, "/")
	if p != "" {
		p += "/"
	}
	s := &Store{client: c, prefix: p, timeout: DefaultRequestTimeout}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Prefix returns the etcd key prefix, with its trailing slash.
func (s *Store) Prefix() string { return s.prefix }

func (s *Store) etcdKey(key string) string { return s.prefix + key }

func (s *Store) kv(kv *mvccpb.KeyValue) KV {
	return KV{
		Key:            strings.TrimPrefix(string(kv.Key), s.prefix),
		Value:          kv.Value,
		ModRevision:    kv.ModRevision,
		CreateRevision: kv.CreateRevision,
	}
}

// op returns the context of one request: the caller's, bounded by the
// request timeout.
func (s *Store) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// Create writes key if it does not exist and returns the new revision.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	k := s.etcdKey(key)
	resp, err := s.client.Txn(octx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(value))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", key, translate(ctx, err))
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("create %s: %w", key, ErrKeyExists)
	}
	return resp.Header.Revision, nil
}

// Get reads key.
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	resp, err := s.client.Get(octx, s.etcdKey(key))
	if err != nil {
		return KV{}, fmt.Errorf("get %s: %w", key, translate(ctx, err))
	}
	if len(resp.Kvs) == 0 {
		return KV{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	return s.kv(resp.Kvs[0]), nil
}

// precondition is the compare of Update and Delete: the key is at
// expectedRev, or merely exists when expectedRev is 0.
func precondition(k string, expectedRev int64) clientv3.Cmp {
	if expectedRev == 0 {
		return clientv3.Compare(clientv3.CreateRevision(k), ">", 0)
	}
	return clientv3.Compare(clientv3.ModRevision(k), "=", expectedRev)
}

// failed explains a transaction whose precondition did not hold, from the
// key's state read in the same transaction.
func (s *Store) failed(op, key string, expectedRev int64, resp *clientv3.TxnResponse) error {
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return fmt.Errorf("%s %s: %w", op, key, ErrNotFound)
	}
	return fmt.Errorf("%s %s: %w", op, key, &ConflictError{Key: key, Expected: expectedRev, Current: s.kv(kvs[0])})
}

// Update overwrites key if its ModRevision is expectedRev (0: if it exists)
// and returns the new revision.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	k := s.etcdKey(key)
	resp, err := s.client.Txn(octx).
		If(precondition(k, expectedRev)).
		Then(clientv3.OpPut(k, string(value))).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("update %s: %w", key, translate(ctx, err))
	}
	if !resp.Succeeded {
		return 0, s.failed("update", key, expectedRev, resp)
	}
	return resp.Header.Revision, nil
}

// Delete removes key if its ModRevision is expectedRev (0: if it exists).
// It returns the deleted value and the revision of the deletion.
func (s *Store) Delete(ctx context.Context, key string, expectedRev int64) (KV, int64, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	k := s.etcdKey(key)
	resp, err := s.client.Txn(octx).
		If(precondition(k, expectedRev)).
		Then(clientv3.OpDelete(k, clientv3.WithPrevKV())).
		Else(clientv3.OpGet(k)).
		Commit()
	if err != nil {
		return KV{}, 0, fmt.Errorf("delete %s: %w", key, translate(ctx, err))
	}
	if !resp.Succeeded {
		return KV{}, 0, s.failed("delete", key, expectedRev, resp)
	}
	del := resp.Responses[0].GetResponseDeleteRange()
	if len(del.PrevKvs) == 0 {
		// The compare saw the key, so the delete in the same transaction
		// removed it; etcd always returns it with WithPrevKV.
		return KV{}, 0, fmt.Errorf("delete %s: etcd returned no previous value", key)
	}
	return s.kv(del.PrevKvs[0]), resp.Header.Revision, nil
}

// List reads one page of the keys under prefix.
func (s *Store) List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	p := s.etcdKey(prefix)
	start := p
	if opts.StartKey != "" {
		if !strings.HasPrefix(opts.StartKey, prefix) {
			return ListResult{}, fmt.Errorf("list %s: start key %q is outside the prefix", prefix, opts.StartKey)
		}
		start = s.etcdKey(opts.StartKey)
	}
	ops := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(p))}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(opts.Limit))
	}
	if opts.Revision > 0 {
		ops = append(ops, clientv3.WithRev(opts.Revision))
	}
	resp, err := s.client.Get(octx, start, ops...)
	if err != nil {
		if errors.Is(err, rpctypes.ErrCompacted) {
			return ListResult{}, fmt.Errorf("list %s: %w", prefix,
				&CompactedError{Revision: opts.Revision, CompactRevision: s.compactRevision(ctx)})
		}
		return ListResult{}, fmt.Errorf("list %s: %w", prefix, translate(ctx, err))
	}
	out := ListResult{
		KVs:            make([]KV, len(resp.Kvs)),
		Revision:       resp.Header.Revision,
		More:           resp.More,
		RemainingCount: resp.Count - int64(len(resp.Kvs)),
	}
	if opts.Revision > 0 {
		out.Revision = opts.Revision
	}
	for i, kv := range resp.Kvs {
		out.KVs[i] = s.kv(kv)
	}
	return out, nil
}

// Count returns the number of keys under prefix.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	resp, err := s.client.Get(octx, s.etcdKey(prefix), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", prefix, translate(ctx, err))
	}
	return resp.Count, nil
}

// CurrentRevision returns the store's revision with a linearizable read of
// one key, so every write that completed before the call is at or below it.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	octx, cancel := s.op(ctx)
	defer cancel()
	key := s.prefix
	if key == "" {
		key = "/"
	}
	resp, err := s.client.Get(octx, key, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("read current revision: %w", translate(ctx, err))
	}
	return resp.Header.Revision, nil
}

// compactRevision finds the revision etcd is compacted to, which a failed
// range read does not report: a watch from revision 1 is refused with it.
// It returns 0 if that does not answer quickly.
func (s *Store) compactRevision(ctx context.Context) int64 {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for resp := range s.client.Watch(ctx, s.prefix+"\x00compact-probe", clientv3.WithRev(1)) {
		return resp.CompactRevision
	}
	return 0
}
