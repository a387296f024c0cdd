package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/storage"
)

type change struct {
	typ   storage.EventType
	key   string
	value string
	prev  string // "" = no previous value
	rev   int64
}

func recv(t *testing.T, ch <-chan storage.Event) storage.Event {
	t.Helper()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type == storage.EventProgress {
				continue
			}
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no watch event within 5s")
		}
	}
}

func TestWatchFromRevisionNoGapNoDuplicate(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	var history []change
	values := map[string]string{}
	apply := func(typ storage.EventType, key, value string) {
		t.Helper()
		c := change{typ: typ, key: key, value: value, prev: values[key]}
		var err error
		switch {
		case typ == storage.EventDelete:
			_, c.rev, err = s.Delete(ctx, key, 0)
			delete(values, key)
		case c.prev == "":
			c.rev, err = s.Create(ctx, key, []byte(value))
			values[key] = value
		default:
			c.rev, err = s.Update(ctx, key, []byte(value), 0)
			values[key] = value
		}
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, c)
	}
	for i := range 30 {
		key := fmt.Sprintf("pods/ns/p%d", i%4)
		switch {
		case i%7 == 6 && values[key] != "":
			apply(storage.EventDelete, key, "")
		default:
			apply(storage.EventPut, key, fmt.Sprint("v", i))
		}
		// Changes outside the prefix must not appear.
		if _, err := s.Update(ctx, "other/x", []byte("x"), 0); err != nil {
			if _, err := s.Create(ctx, "other/x", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, from := range []int{0, 1, 13, len(history) - 1} {
		t.Run(fmt.Sprintf("from change %d", from), func(t *testing.T) {
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ch := s.Watch(wctx, "pods/", history[from].rev)
			for _, want := range history[from:] {
				ev := recv(t, ch)
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
				if ev.Type != want.typ || ev.KV.Key != want.key || ev.Revision != want.rev || ev.KV.ModRevision != want.rev {
					t.Fatalf("event %s %s@%d, want %s %s@%d", ev.Type, ev.KV.Key, ev.Revision, want.typ, want.key, want.rev)
				}
				if want.typ == storage.EventPut && string(ev.KV.Value) != want.value {
					t.Fatalf("value %q, want %q", ev.KV.Value, want.value)
				}
				if (ev.PrevKV == nil) != (want.prev == "") || (ev.PrevKV != nil && string(ev.PrevKV.Value) != want.prev) {
					t.Fatalf("%s@%d prev = %+v, want %q", want.key, want.rev, ev.PrevKV, want.prev)
				}
				if ev.IsCreate() != (want.typ == storage.EventPut && want.prev == "") {
					t.Fatalf("%s@%d IsCreate = %v", want.key, want.rev, ev.IsCreate())
				}
			}
			// Then live changes, and nothing in between.
			rev := mustCreate(t, s, fmt.Sprintf("pods/live/%d", from), "live")
			history = append(history, change{typ: storage.EventPut, key: fmt.Sprintf("pods/live/%d", from), value: "live", rev: rev})
			ev := recv(t, ch)
			if ev.Revision != rev || ev.KV.Key != fmt.Sprintf("pods/live/%d", from) {
				t.Fatalf("live event %s@%d, want @%d", ev.KV.Key, ev.Revision, rev)
			}
		})
	}
}

func TestWatchProgress(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, "pods/a/a", "v")
	ch := s.Watch(ctx, "pods/", 0)
	// A write elsewhere moves the store revision; the idle watch learns it
	// through a progress event.
	rev := mustCreate(t, s, "services/a/a", "v")
	deadline := time.After(5 * time.Second)
	for {
		if err := s.RequestProgress(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-ch:
			if ev.Type != storage.EventProgress {
				t.Fatalf("unexpected event %+v", ev)
			}
			if ev.Revision >= rev {
				return
			}
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no progress event at the current revision")
		}
	}
}

func TestWatchStopsWithContext(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch := s.Watch(ctx, "pods/", 0)
	cancel()
	select {
	case ev, ok := <-ch:
		if ok && ev.Err != nil {
			t.Fatalf("error after cancel: %v", ev.Err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch not closed after cancel")
	}
}
