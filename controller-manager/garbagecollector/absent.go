package garbagecollector

import (
	"sync"

	"github.com/minik8s/minik8s/api"
)

// absentCache remembers the uids of owners known to be gone, so that their
// dependents are collected without asking the apiserver about each owner
// again (kube's absentOwnerCache). It keeps the most recent size uids.
type absentCache struct {
	mu   sync.Mutex
	set  map[api.UID]struct{}
	ring []api.UID
	next int
}

func newAbsentCache(size int) *absentCache {
	return &absentCache{set: make(map[api.UID]struct{}, size), ring: make([]api.UID, size)}
}

func (a *absentCache) add(uid api.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.set[uid]; ok {
		return
	}
	if old := a.ring[a.next]; old != "" {
		delete(a.set, old)
	}
	a.ring[a.next] = uid
	a.set[uid] = struct{}{}
	a.next = (a.next + 1) % len(a.ring)
}

func (a *absentCache) has(uid api.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.set[uid]
	return ok
}
