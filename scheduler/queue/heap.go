package queue

import "container/heap"

// keyedHeap is a heap of queued pods with O(log n) update and delete by key.
type keyedHeap struct {
	items []*QueuedPodInfo
	index map[string]int
	less  func(a, b *QueuedPodInfo) bool
}

func newHeap(less func(a, b *QueuedPodInfo) bool) *keyedHeap {
	return &keyedHeap{index: map[string]int{}, less: less}
}

type heapAdapter struct{ h *keyedHeap }

func (a heapAdapter) Len() int           { return len(a.h.items) }
func (a heapAdapter) Less(i, j int) bool { return a.h.less(a.h.items[i], a.h.items[j]) }
func (a heapAdapter) Swap(i, j int) {
	h := a.h
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].key] = i
	h.index[h.items[j].key] = j
}
func (a heapAdapter) Push(x any) {
	p := x.(*QueuedPodInfo)
	a.h.index[p.key] = len(a.h.items)
	a.h.items = append(a.h.items, p)
}
func (a heapAdapter) Pop() any {
	h := a.h
	n := len(h.items) - 1
	p := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	delete(h.index, p.key)
	return p
}

func (h *keyedHeap) Len() int { return len(h.items) }

// AddOrUpdate inserts p, or replaces the entry with its key.
func (h *keyedHeap) AddOrUpdate(p *QueuedPodInfo) {
	if i, ok := h.index[p.key]; ok {
		h.items[i] = p
		heap.Fix(heapAdapter{h}, i)
		return
	}
	heap.Push(heapAdapter{h}, p)
}

func (h *keyedHeap) Get(key string) (*QueuedPodInfo, bool) {
	i, ok := h.index[key]
	if !ok {
		return nil, false
	}
	return h.items[i], true
}

func (h *keyedHeap) Delete(key string) bool {
	i, ok := h.index[key]
	if !ok {
		return false
	}
	heap.Remove(heapAdapter{h}, i)
	return true
}

func (h *keyedHeap) Peek() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *keyedHeap) Pop() *QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop(heapAdapter{h}).(*QueuedPodInfo)
}
