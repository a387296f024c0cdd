package storage

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventType says what an Event reports.
type EventType int

// Event types.
const (
	// EventPut: KV was created or updated (PrevKV is nil for a create).
	EventPut EventType = iota + 1
	// EventDelete: KV.Key was deleted at KV.ModRevision; PrevKV is the
	// value it had.
	EventDelete
	// EventProgress: no change under the prefix up to Revision.
	EventProgress
)

func (t EventType) String() string {
	switch t {
	case EventPut:
		return "PUT"
	case EventDelete:
		return "DELETE"
	case EventProgress:
		return "PROGRESS"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one change seen by Watch. An Event with Err set is the last one
// on its channel.
type Event struct {
	Type   EventType
	KV     KV
	PrevKV *KV
	// Revision is the revision of the change, or the store revision of a
	// progress event.
	Revision int64
	Err      error
}

// IsCreate reports whether a put created the key.
func (e Event) IsCreate() bool {
	return e.Type == EventPut && e.KV.CreateRevision == e.KV.ModRevision
}

// watchCtx gives every watch and progress request the same gRPC metadata,
// so they share one etcd watch stream: RequestProgress answers on the
// stream of its context. Requiring a leader makes a partitioned member
// fail the watch instead of silently stalling it.
func watchCtx(ctx context.Context) context.Context { return clientv3.WithRequireLeader(ctx) }

// Watch streams the changes under prefix from revision fromRev on (0: from
// now), each with the key's previous value, plus progress events while
// nothing changes. Events arrive in revision order with no gap. A compacted
// fromRev gives one Event whose Err is a *CompactedError; any other failure
// one Event with Err (ErrUnavailable when etcd is gone). The channel closes
// after an error or when ctx ends.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64) <-chan Event {
	out := make(chan Event, 128)
	ctx, cancel := context.WithCancel(ctx)
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithProgressNotify()}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev))
	}
	wch := s.client.Watch(watchCtx(ctx), s.etcdKey(prefix), opts...)
	go func() {
		defer close(out)
		defer cancel()
		send := func(e Event) bool {
			select {
			case out <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for resp := range wch {
			if resp.CompactRevision != 0 {
				send(Event{Err: fmt.Errorf("watch %s: %w", prefix, &CompactedError{Revision: fromRev, CompactRevision: resp.CompactRevision})})
				return
			}
			if err := resp.Err(); err != nil {
				if ctx.Err() == nil {
					send(Event{Err: fmt.Errorf("watch %s: %w", prefix, translate(ctx, err))})
				}
				return
			}
			if resp.IsProgressNotify() {
				if !send(Event{Type: EventProgress, Revision: resp.Header.Revision}) {
					return
				}
				continue
			}
			for _, e := range resp.Events {
				if !send(s.event(e)) {
					return
				}
			}
		}
		if ctx.Err() == nil {
			// The client closed the channel without the caller asking:
			// the client itself is closing.
			send(Event{Err: fmt.Errorf("watch %s: %w: watch channel closed", prefix, ErrUnavailable)})
		}
	}()
	return out
}

func (s *Store) event(e *clientv3.Event) Event {
	ev := Event{KV: s.kv(e.Kv), Revision: e.Kv.ModRevision}
	if e.Type == mvccpb.DELETE {
		ev.Type = EventDelete
	} else {
		ev.Type = EventPut
	}
	if e.PrevKv != nil {
		prev := s.kv(e.PrevKv)
		ev.PrevKV = &prev
	}
	return ev
}

// RequestProgress asks etcd to send a progress event, carrying the current
// store revision, to every watch of this store. etcd answers only if, at
// that moment, every watch on the stream has caught up and none starts at
// a future revision; otherwise the request is dropped, so callers that
// wait for one ask again. Caches use it to learn that they are fresh when
// nothing changes under their prefix.
func (s *Store) RequestProgress(ctx context.Context) error {
	octx, cancel := s.op(ctx)
	defer cancel()
	if err := s.client.RequestProgress(watchCtx(octx)); err != nil {
		return fmt.Errorf("request watch progress: %w", translate(ctx, err))
	}
	return nil
}
