package cacher

import (
	"slices"
	"strings"
)

// chunkMax bounds a chunk of sortedObjects: an insert or delete moves at
// most this many pointers, plus one pointer per chunk when a chunk splits
// or empties.
const chunkMax = 512

// sortedObjects holds objects in key order as a list of sorted chunks, so
// that inserting into a cache of n objects costs O(sqrt-ish) pointer moves
// instead of the O(n) of one flat slice (which also made the garbage
// collector's write barriers run over the whole slice on every insert).
// Every key in chunks[i] is below every key in chunks[i+1]; no chunk is empty.
type sortedObjects struct {
	chunks [][]*Object
	n      int
}

// newSortedObjects builds the list from objects already sorted by key.
func newSortedObjects(objs []*Object) sortedObjects {
	var s sortedObjects
	for len(objs) > 0 {
		k := min(len(objs), chunkMax/2)
		s.chunks = append(s.chunks, slices.Clone(objs[:k]))
		objs = objs[k:]
		s.n += k
	}
	return s
}

func (s *sortedObjects) len() int { return s.n }

// chunkFor is the index of the chunk key belongs in: the first chunk whose
// last key is >= key, or the last chunk.
func (s *sortedObjects) chunkFor(key string) int {
	i, _ := slices.BinarySearchFunc(s.chunks, key, func(c []*Object, k string) int {
		return strings.Compare(c[len(c)-1].Key, k)
	})
	return min(i, len(s.chunks)-1)
}

func searchChunk(c []*Object, key string) (int, bool) {
	return slices.BinarySearchFunc(c, key, func(e *Object, k string) int { return strings.Compare(e.Key, k) })
}

// put inserts o, or replaces the object with its key.
func (s *sortedObjects) put(o *Object) {
	if len(s.chunks) == 0 {
		s.chunks = [][]*Object{{o}}
		s.n = 1
		return
	}
	ci := s.chunkFor(o.Key)
	c := s.chunks[ci]
	i, found := searchChunk(c, o.Key)
	if found {
		c[i] = o
		return
	}
	c = slices.Insert(c, i, o)
	s.n++
	if len(c) <= chunkMax {
		s.chunks[ci] = c
		return
	}
	half := len(c) / 2
	right := slices.Clone(c[half:])
	clear(c[half:])
	s.chunks[ci] = c[:half]
	s.chunks = slices.Insert(s.chunks, ci+1, right)
}

// remove deletes the object with key, if present.
func (s *sortedObjects) remove(key string) {
	if len(s.chunks) == 0 {
		return
	}
	ci := s.chunkFor(key)
	c := s.chunks[ci]
	i, found := searchChunk(c, key)
	if !found {
		return
	}
	c = slices.Delete(c, i, i+1)
	s.n--
	if len(c) == 0 {
		s.chunks = slices.Delete(s.chunks, ci, ci+1)
		return
	}
	s.chunks[ci] = c
}

// ascend calls fn on the objects with keys >= from, in key order, until fn
// returns false.
func (s *sortedObjects) ascend(from string, fn func(*Object) bool) {
	if len(s.chunks) == 0 {
		return
	}
	ci := 0
	if from != "" {
		ci = s.chunkFor(from)
	}
	for ; ci < len(s.chunks); ci++ {
		c := s.chunks[ci]
		if from != "" {
			i, _ := searchChunk(c, from)
			c = c[i:]
			from = ""
		}
		for _, o := range c {
			if !fn(o) {
				return
			}
		}
	}
}
