package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// Event is one event of a watch. Type is api.Added, api.Modified,
// api.Deleted, api.Bookmark or api.Error. Object is set for every type but
// Error; for Bookmark it carries only the resourceVersion (and, at the end of
// initial events, the api.InitialEventsAnnotation). Status is set for Error
// (for example 410 Expired, after which the caller must re-list).
type Event[T any] struct {
	Type   string
	Object *T
	Status *api.Status
}

// Watcher is an open watch.
type Watcher[T any] interface {
	// ResultChan delivers the events. It is closed when the server ends the
	// stream, the connection fails, the watch's context ends or Stop is
	// called. After an Error event the channel is closed too.
	ResultChan() <-chan Event[T]
	// Stop ends the watch and releases the connection. It is safe to call
	// more than once and from any goroutine.
	Stop()
}

var _ Watcher[int] = (*streamWatcher[int])(nil)

// streamWatcher decodes a newline-delimited stream of api.WatchEvent.
type streamWatcher[T any] struct {
	ctx    context.Context
	body   io.ReadCloser
	decode func([]byte) (*T, error)
	result chan Event[T]
	done   chan struct{}
	once   sync.Once
}

func newStreamWatcher[T any](ctx context.Context, body io.ReadCloser, decode func([]byte) (*T, error)) *streamWatcher[T] {
	w := &streamWatcher[T]{ctx: ctx, body: body, decode: decode, result: make(chan Event[T]), done: make(chan struct{})}
	// The end of ctx is a Stop, not a broken stream: no ERROR event.
	stop := context.AfterFunc(ctx, w.Stop)
	go func() {
		defer stop()
		w.receive()
	}()
	return w
}

// NewStreamWatcher returns a Watcher over an open watch stream body, decoding
// objects with decode. It is how the typed and dynamic clients watch, exposed
// for callers holding a raw stream from Client.Stream; the watch stops when
// ctx ends.
func NewStreamWatcher[T any](ctx context.Context, body io.ReadCloser, decode func([]byte) (*T, error)) Watcher[T] {
	return newStreamWatcher(ctx, body, decode)
}

func (w *streamWatcher[T]) ResultChan() <-chan Event[T] { return w.result }

func (w *streamWatcher[T]) Stop() {
	w.once.Do(func() {
		close(w.done)
		// Closing the body unblocks the decoder's read.
		w.body.Close()
	})
}

func (w *streamWatcher[T]) send(ev Event[T]) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

func (w *streamWatcher[T]) receive() {
	defer close(w.result)
	defer w.Stop()
	dec := json.NewDecoder(w.body)
	for {
		var we api.WatchEvent
		if err := dec.Decode(&we); err != nil {
			select {
			case <-w.done:
				return // stopped: the read error is ours
			default:
			}
			if w.ctx.Err() != nil {
				return // cancelled: the transport failed the read for it
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return // the server ended the stream
			}
			// A broken connection or garbage: report it like client-go so
			// the consumer does not mistake it for a clean end.
			w.send(Event[T]{Type: api.Error, Status: internalStatus(fmt.Errorf("unable to decode an event from the watch stream: %w", err))})
			return
		}
		switch we.Type {
		case api.Error:
			var st api.Status
			if err := json.Unmarshal(we.Object, &st); err != nil {
				st = *internalStatus(fmt.Errorf("unable to decode the ERROR event of the watch stream: %w", err))
			}
			w.send(Event[T]{Type: api.Error, Status: &st})
			return
		case api.Added, api.Modified, api.Deleted, api.Bookmark:
			obj, err := w.decode(we.Object)
			if err != nil {
				w.send(Event[T]{Type: api.Error, Status: internalStatus(fmt.Errorf("unable to decode watch event object: %w", err))})
				return
			}
			if !w.send(Event[T]{Type: we.Type, Object: obj}) {
				return
			}
		default:
			w.send(Event[T]{Type: api.Error, Status: internalStatus(fmt.Errorf("got invalid watch event type: %q", we.Type))})
			return
		}
	}
}

func internalStatus(err error) *api.Status {
	return &api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure,
		Code:     http.StatusInternalServerError,
		Reason:   api.StatusReasonInternalError,
		Message:  err.Error(),
	}
}
