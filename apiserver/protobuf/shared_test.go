package protobuf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// TestList: a list made from its items' encodings is byte for byte the
// list k8s.io/api marshals whole, for every served kind.
func TestList(t *testing.T) {
	t.Parallel()
	remaining := int64(3)
	for _, ri := range api.Resources {
		for _, meta := range []api.ListMeta{{}, {ResourceVersion: "12", Continue: "tok", RemainingItemCount: &remaining}} {
			for _, n := range []int{0, 1, 3} {
				var items [][]byte
				for i := range n {
					obj := ri.New()
					*obj.GetTypeMeta() = api.TypeMeta{APIVersion: ri.GroupVersion(), Kind: ri.Kind}
					obj.GetObjectMeta().Name = fmt.Sprintf("item-%d-with-a-long-enough-name", i)
					data, err := json.Marshal(obj)
					if err != nil {
						t.Fatal(err)
					}
					items = append(items, data)
				}
				whole, err := json.Marshal(map[string]any{"kind": ri.ListKind(), "apiVersion": ri.GroupVersion(),
					"metadata": meta, "items": rawItems(items)})
				if err != nil {
					t.Fatal(err)
				}
				want, err := Encode(whole)
				if err != nil {
					t.Fatalf("%s: %v", ri.ListKind(), err)
				}
				got, err := List(ri.GroupVersion(), ri.ListKind(), meta, items)
				if err != nil {
					t.Fatalf("%s: %v", ri.ListKind(), err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s of %d with %+v:\n got %x\nwant %x", ri.ListKind(), n, meta, got, want)
				}
				var streamed bytes.Buffer
				if err := WriteList(&streamed, ri.GroupVersion(), ri.ListKind(), meta, items); err != nil {
					t.Fatalf("%s: %v", ri.ListKind(), err)
				}
				if !bytes.Equal(streamed.Bytes(), want) {
					t.Fatalf("%s of %d with %+v streamed:\n got %x\nwant %x", ri.ListKind(), n, meta, streamed.Bytes(), want)
				}
			}
		}
	}
	if _, err := List("v1", "NoSuchList", api.ListMeta{}, nil); err == nil {
		t.Error("listed an unknown kind")
	}
	if _, err := List("v1", "PodList", api.ListMeta{}, [][]byte{[]byte(`{"kind":"Pod","apiVersion":"v1","spec":"not a spec"}`)}); err == nil {
		t.Error("listed an item that does not decode")
	}
	var buf bytes.Buffer
	if err := WriteList(&buf, "v1", "PodList", api.ListMeta{}, [][]byte{[]byte(`{"kind":"Pod","apiVersion":"v1","spec":"not a spec"}`)}); err == nil || buf.Len() > 0 {
		t.Errorf("streamed a list of an item that does not decode: %v, %d bytes written", err, buf.Len())
	}
}

func rawItems(items [][]byte) []json.RawMessage {
	out := []json.RawMessage{}
	for _, it := range items {
		out = append(out, it)
	}
	return out
}

// TestWatchEventLine: a line's frame is WatchEvent's, made once per line.
func TestWatchEventLine(t *testing.T) {
	t.Parallel()
	line := []byte(`{"type":"MODIFIED","object":` + podJSON + "}\n")
	want, err := WatchEvent("MODIFIED", []byte(podJSON))
	if err != nil {
		t.Fatal(err)
	}
	got, err := WatchEventLine(line)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("frame %x %v, want %x", got, err, want)
	}
	again, _ := WatchEventLine(line)
	if &again[0] != &got[0] {
		t.Error("the same line was converted twice")
	}
	if _, err := WatchEventLine([]byte(`{"type":"ADDED","object":{"kind":"Nope","apiVersion":"v1"}}`)); err == nil {
		t.Error("converted an unknown kind")
	}
}

// TestCacheIdentity: entries are by memory, not content, and go with it.
func TestCacheIdentity(t *testing.T) {
	t.Parallel()
	c := newCache()
	calls := 0
	upper := func(b []byte) ([]byte, error) { calls++; return bytes.ToUpper(b), nil }
	a := []byte(strings.Repeat("a", 64))
	b := bytes.Clone(a)
	for _, in := range [][]byte{a, a, b, a[:32], b} {
		out, err := c.get(in, upper)
		if err != nil || !bytes.Equal(out, bytes.ToUpper(in)) {
			t.Fatalf("get(%s) = %s %v", in, out, err)
		}
	}
	if calls != 3 { // a, b, and a's first half
		t.Fatalf("%d conversions, want 3", calls)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	for i := range 100 {
		c.get(bytes.Repeat([]byte{byte(i)}, 64), upper)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.len() > 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries stay after their memory went", c.len())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
