package protobuf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/minik8s/minik8s/api"
)

// The apiserver's watch cache shares one JSON encoding per object version
// among every list that returns it, and one watch line per event among
// every watcher that gets it. List and WatchEventLine take those shared,
// never-changing slices and remember what they made of each by the
// identity of its memory, so a pod listed by a thousand informers, or an
// event sent to a thousand watchers, is converted once; kube-apiserver
// caches its encodings per object for the same reason.
var (
	items  = newCache() // object JSON → the object's protobuf message
	frames = newCache() // watch line → frame
)

// cache maps a byte slice, by the memory it starts at and its length, to
// what was made of it. An entry lives as long as that memory: a weak key
// never matches a later slice that reuses the address, and a cleanup
// removes the entry once the memory is collected.
type cache struct {
	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
}

type cacheKey struct {
	start weak.Pointer[byte]
	n     int
}

type cacheEntry struct {
	once sync.Once
	data []byte
	err  error
}

func newCache() *cache { return &cache{entries: map[cacheKey]*cacheEntry{}} }

// get returns make(b), made once for as long as b's memory lives. b must
// never change.
func (c *cache) get(b []byte, make func([]byte) ([]byte, error)) ([]byte, error) {
	if len(b) < 16 {
		// Not worth it, and the runtime may batch such small allocations
		// so their memory is never seen to go.
		return make(b)
	}
	k := cacheKey{weak.Make(&b[0]), len(b)}
	c.mu.Lock()
	e := c.entries[k]
	if e == nil {
		e = &cacheEntry{}
		c.entries[k] = e
		runtime.AddCleanup(&b[0], c.remove, k)
	}
	c.mu.Unlock()
	e.once.Do(func() { e.data, e.err = make(b) })
	return e.data, e.err
}

func (c *cache) remove(k cacheKey) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// message is an object's own protobuf message (no envelope), from its JSON.
func message(data []byte) ([]byte, error) {
	obj, err := fromJSON(data)
	if err != nil {
		return nil, err
	}
	m, ok := obj.(interface{ Marshal() ([]byte, error) })
	if !ok {
		return nil, fmt.Errorf("%w: %T has no protobuf marshalling", ErrNotRegistered, obj)
	}
	return m.Marshal()
}

// List returns the protobuf encoding of a list (kind "PodList" of
// apiVersion "v1"): meta and the items, each an object's JSON that must
// never change (the watch cache's shared encodings). The bytes are those
// of k8s.io/api's generated list marshalling: every built-in list is
// metadata (field 1) then items (field 2), the layout apimachinery's
// streaming list encoder relies on too.
func List(apiVersion, kind string, meta api.ListMeta, items [][]byte) ([]byte, error) {
	if !Registered(apiVersion, kind) {
		return nil, fmt.Errorf("%w: %s %s", ErrNotRegistered, apiVersion, kind)
	}
	lm := metav1.ListMeta{ResourceVersion: meta.ResourceVersion, Continue: meta.Continue, RemainingItemCount: meta.RemainingItemCount}
	lmData, err := lm.Marshal()
	if err != nil {
		return nil, err
	}
	msgs := make([][]byte, len(items))
	size := 1 + protowire.SizeBytes(len(lmData))
	for i, it := range items {
		if msgs[i], err = itemMessage(it); err != nil {
			return nil, fmt.Errorf("%s item %d: %w", kind, i, err)
		}
		size += 1 + protowire.SizeBytes(len(msgs[i]))
	}
	raw := make([]byte, 0, size)
	raw = protowire.AppendTag(raw, 1, protowire.BytesType)
	raw = protowire.AppendBytes(raw, lmData)
	for _, m := range msgs {
		raw = protowire.AppendTag(raw, 2, protowire.BytesType)
		raw = protowire.AppendBytes(raw, m)
	}
	var buf bytes.Buffer
	unk := &k8sruntime.Unknown{TypeMeta: k8sruntime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	if err := serializer.Encode(unk, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func itemMessage(data []byte) ([]byte, error) { return items.get(data, message) }

// WatchEventLine returns the frame of a JSON watch event
// ({"type":"ADDED","object":{...}}), as WatchEvent makes it. line must
// never change (the watch cache's shared lines).
func WatchEventLine(line []byte) ([]byte, error) {
	return frames.get(line, func(line []byte) ([]byte, error) {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("read watch event: %w", err)
		}
		return WatchEvent(ev.Type, ev.Object)
	})
}
