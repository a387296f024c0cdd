package protobuf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
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
	var buf bytes.Buffer
	if err := WriteList(&buf, apiVersion, kind, meta, items); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteList writes List's bytes to w without building them in memory
// first: the envelope's head, the list's metadata, each item's cached
// message and the envelope's tail. Nothing is written when an item cannot
// be converted.
func WriteList(w io.Writer, apiVersion, kind string, meta api.ListMeta, items [][]byte) error {
	if !Registered(apiVersion, kind) {
		return fmt.Errorf("%w: %s %s", ErrNotRegistered, apiVersion, kind)
	}
	lm := metav1.ListMeta{ResourceVersion: meta.ResourceVersion, Continue: meta.Continue, RemainingItemCount: meta.RemainingItemCount}
	lmData, err := lm.Marshal()
	if err != nil {
		return err
	}
	msgs := make([][]byte, len(items))
	size := 1 + protowire.SizeBytes(len(lmData))
	for i, it := range items {
		if msgs[i], err = itemMessage(it); err != nil {
			return fmt.Errorf("%s item %d: %w", kind, i, err)
		}
		size += 1 + protowire.SizeBytes(len(msgs[i]))
	}
	head, tail, err := envelope(apiVersion, kind)
	if err != nil {
		return err
	}
	var scratch [2 * binary.MaxVarintLen64]byte
	out := append(head, protowire.AppendVarint(protowire.AppendTag(scratch[:0], 2, protowire.BytesType), uint64(size))...)
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendBytes(out, lmData)
	if _, err := w.Write(out); err != nil {
		return err
	}
	for _, m := range msgs {
		b := protowire.AppendVarint(protowire.AppendTag(scratch[:0], 2, protowire.BytesType), uint64(len(m)))
		if _, err := w.Write(b); err != nil {
			return err
		}
		if _, err := w.Write(m); err != nil {
			return err
		}
	}
	_, err = w.Write(tail)
	return err
}

// envelope returns the bytes of the "k8s\x00" + runtime.Unknown envelope
// of apiVersion and kind before and after its raw field (field 2, which
// comes between typeMeta, field 1, and contentEncoding, field 3).
func envelope(apiVersion, kind string) (head, tail []byte, err error) {
	var buf bytes.Buffer
	unk := &k8sruntime.Unknown{TypeMeta: k8sruntime.TypeMeta{APIVersion: apiVersion, Kind: kind}}
	if err := serializer.Encode(unk, &buf); err != nil {
		return nil, nil, err
	}
	b := buf.Bytes()
	const magic = 4
	if len(b) < magic+2 || b[magic] != 0x0a {
		return nil, nil, fmt.Errorf("unexpected protobuf envelope % x", b)
	}
	_, n := protowire.ConsumeBytes(b[magic+1:])
	if n < 0 {
		return nil, nil, fmt.Errorf("unexpected protobuf envelope % x", b)
	}
	split := magic + 1 + n
	return b[:split:split], b[split:], nil
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
