package aggregatortest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// HeldPath is the collection of a Held backend: a request for it (a list
// with GET, a create with POST) waits until Release, so it is a slow
// request through the apiserver's whole filter chain.
const HeldPath = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"

// Held is a registered, available test extension apiserver of
// wardle.example.com/v1alpha1 that holds every request for HeldPath until
// Release or until the apiserver gives up on it.
type Held struct {
	*Backend
	release chan struct{}
	once    sync.Once
	held    atomic.Int32
	// writes counts the held POSTs alone.
	writes atomic.Int32
}

// StartHeld starts a Held backend and waits until its APIService is
// available.
func StartHeld(t testing.TB, ctx context.Context, c *client.Client) *Held {
	t.Helper()
	h := &Held{release: make(chan struct{})}
	h.Backend = Start(t, ctx, c, Options{Group: "wardle.example.com", Version: "v1alpha1",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/apis/wardle.example.com/v1alpha1":
				fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"wardle.example.com/v1alpha1","resources":[{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get","list","create"]}]}`)
			case HeldPath:
				h.held.Add(1)
				defer h.held.Add(-1)
				if r.Method == http.MethodPost {
					h.writes.Add(1)
					defer h.writes.Add(-1)
				}
				select {
				case <-h.release:
				case <-r.Context().Done():
					return
				}
				fmt.Fprint(w, `{"kind":"FlunderList","apiVersion":"wardle.example.com/v1alpha1","metadata":{},"items":[]}`)
			default:
				http.NotFound(w, r)
			}
		})})
	t.Cleanup(h.Release)
	WaitCondition(t, ctx, c, h.Name, api.ConditionTrue, "Passed")
	return h
}

// Held is the number of requests the backend holds now.
func (h *Held) Held() int { return int(h.held.Load()) }

// HeldWrites is the number of creates (POSTs) the backend holds now.
func (h *Held) HeldWrites() int { return int(h.writes.Load()) }

// Release answers the requests held and every later one at once.
func (h *Held) Release() { h.once.Do(func() { close(h.release) }) }
