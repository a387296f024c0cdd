package cacher

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortedObjects checks the chunked list against a plain sorted slice
// over random inserts, replacements, removals and range scans, with enough
// objects to split and empty chunks many times.
func TestSortedObjects(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s sortedObjects
	ref := map[string]*Object{}
	key := func() string { return fmt.Sprintf("pods/ns%d/p-%d", rng.IntN(4), rng.IntN(3000)) }
	check := func(step int) {
		t.Helper()
		want := slices.Sorted(func(yield func(string) bool) {
			for k := range ref {
				if !yield(k) {
					return
				}
			}
		})
		var got []string
		s.ascend("", func(o *Object) bool {
			if ref[o.Key] != o {
				t.Fatalf("step %d: %s is not the latest object", step, o.Key)
			}
			got = append(got, o.Key)
			return true
		})
		if !slices.Equal(got, want) || s.len() != len(want) {
			t.Fatalf("step %d: got %d keys (len %d), want %d", step, len(got), s.len(), len(want))
		}
		for i, c := range s.chunks {
			if len(c) == 0 || len(c) > chunkMax {
				t.Fatalf("step %d: chunk %d has %d objects", step, i, len(c))
			}
		}
		from := fmt.Sprintf("pods/ns%d/", rng.IntN(4))
		got = got[:0]
		s.ascend(from, func(o *Object) bool {
			if !strings.HasPrefix(o.Key, from) {
				return false
			}
			got = append(got, o.Key)
			return true
		})
		var wantNS []string
		for _, k := range want {
			if strings.HasPrefix(k, from) {
				wantNS = append(wantNS, k)
			}
		}
		if !slices.Equal(got, wantNS) {
			t.Fatalf("step %d: range %s: got %d keys, want %d", step, from, len(got), len(wantNS))
		}
	}
	for step := range 40000 {
		k := key()
		if rng.IntN(3) == 0 {
			s.remove(k)
			delete(ref, k)
		} else {
			o := &Object{Key: k}
			s.put(o)
			ref[k] = o
		}
		if step%4000 == 0 {
			check(step)
		}
	}
	check(-1)
	// Rebuild from a sorted slice, as the initial list does, and keep going.
	all := make([]*Object, 0, len(ref))
	s.ascend("", func(o *Object) bool { all = append(all, o); return true })
	s = newSortedObjects(all)
	check(-2)
	for k := range ref {
		s.remove(k)
		delete(ref, k)
	}
	check(-3)
	if len(s.chunks) != 0 {
		t.Fatalf("%d chunks left in an empty list", len(s.chunks))
	}
}
