package controller

import (
	"strconv"
	"sync"
	"time"
)

// Writes remembers, per key (a service), the resourceVersions of the
// objects a controller wrote ("" for deleted ones) until its cache shows
// them, so that a sync never acts on a cache older than its own writes:
// kube's endpointSliceTracker, without which a sync right after a create
// by generateName would create the slice a second time.
type Writes struct {
	mu      sync.Mutex
	written map[string]map[string]write
}

// write is one write awaited in the cache.
type write struct {
	rv string // "" for a delete
	at time.Time
}

// WritesTTL bounds how long a write is awaited: an informer that re-listed
// past it (the object created and deleted in between) never shows it.
const WritesTTL = 30 * time.Second

// NewWrites returns an empty tracker.
func NewWrites() *Writes { return &Writes{written: map[string]map[string]write{}} }

// Remember records that the controller wrote object name of key at rv, or
// deleted it (rv "").
func (w *Writes) Remember(key, name, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.written[key]
	if m == nil {
		m = map[string]write{}
		w.written[key] = m
	}
	m[name] = write{rv: rv, at: time.Now()}
}

// Stale reports whether the cache, which holds the objects of key named in
// cached with their resourceVersions, has not caught up with the writes,
// forgetting the writes it shows.
func (w *Writes) Stale(key string, cached map[string]string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.written[key]
	if len(m) == 0 {
		return false
	}
	for name, wr := range m {
		got, ok := cached[name]
		switch {
		case wr.rv == "" && !ok, wr.rv != "" && ok && rvAtLeast(got, wr.rv), time.Since(wr.at) > WritesTTL:
			delete(m, name)
		}
	}
	if len(m) == 0 {
		delete(w.written, key)
		return false
	}
	return true
}

func rvAtLeast(got, want string) bool {
	g, err1 := strconv.ParseInt(got, 10, 64)
	w, err2 := strconv.ParseInt(want, 10, 64)
	return err1 != nil || err2 != nil || g >= w
}
