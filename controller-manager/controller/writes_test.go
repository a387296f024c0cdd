package controller

import (
	"testing"
	"time"
)

func TestWritesStale(t *testing.T) {
	w := NewWrites()
	have := func(name, rv string) map[string]string { return map[string]string{name: rv} }
	w.Remember("ns/web", "web-a", "10")
	if !w.Stale("ns/web", nil) || !w.Stale("ns/web", have("web-a", "9")) {
		t.Fatal("cache without the write (or older) is not stale")
	}
	if w.Stale("ns/web", have("web-a", "10")) {
		t.Fatal("cache with the write is stale")
	}
	w.Remember("ns/web", "web-a", "")
	if !w.Stale("ns/web", have("web-a", "10")) || w.Stale("ns/web", nil) {
		t.Fatal("delete not awaited")
	}
	w.Remember("ns/web", "web-b", "20")
	w.written["ns/web"]["web-b"] = write{rv: "20", at: time.Now().Add(-2 * WritesTTL)}
	if w.Stale("ns/web", nil) {
		t.Fatal("expired write still awaited")
	}
}
