package informer

import (
	"context"
	"sync"
)

type noteKind int

const (
	addNote noteKind = iota
	updateNote
	deleteNote
)

// notification is one queued handler call; flag is isInitialList for adds
// and finalStateUnknown for deletes.
type notification[T any] struct {
	kind     noteKind
	old, obj *T
	flag     bool
}

// listener feeds one handler from an unbounded buffer on its own goroutine,
// like client-go's processorListener: the watch loop never waits for it.
type listener[T any] struct {
	h      Handler[T]
	mu     sync.Mutex
	buf    []notification[T]
	signal chan struct{}
}

func newListener[T any](h Handler[T]) *listener[T] {
	return &listener[T]{h: h, signal: make(chan struct{}, 1)}
}

func (l *listener[T]) add(n notification[T]) {
	l.mu.Lock()
	l.buf = append(l.buf, n)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

func (l *listener[T]) run(ctx context.Context) {
	for {
		l.mu.Lock()
		if len(l.buf) == 0 {
			l.buf = nil // drop the grown array once drained
			l.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-l.signal:
			}
			continue
		}
		n := l.buf[0]
		l.buf[0] = notification[T]{}
		l.buf = l.buf[1:]
		l.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		l.dispatch(n)
	}
}

func (l *listener[T]) dispatch(n notification[T]) {
	switch n.kind {
	case addNote:
		if l.h.OnAdd != nil {
			l.h.OnAdd(n.obj, n.flag)
		}
	case updateNote:
		if l.h.OnUpdate != nil {
			l.h.OnUpdate(n.old, n.obj)
		}
	case deleteNote:
		if l.h.OnDelete != nil {
			l.h.OnDelete(n.obj, n.flag)
		}
	}
}
