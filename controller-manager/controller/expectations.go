package controller

import (
	"sync"
	"time"
)

// ExpectationsTimeout is how long a controller trusts its expectations;
// past it a sync proceeds anyway (a watch event was lost), as in kube.
const ExpectationsTimeout = 5 * time.Minute

// Expectations records, per controller key, the creates and deletes a
// controller has issued but not yet seen in its informer, so a slow watch
// never makes it create or delete twice (kube's
// UIDTrackingControllerExpectations). A sync should act only when
// Satisfied; the pod event handlers call CreationObserved and
// DeletionObserved.
type Expectations struct {
	mu  sync.Mutex
	m   map[string]*expectation
	now func() time.Time
}

type expectation struct {
	add, del  int
	deletions map[string]struct{} // pod keys expected to go
	at        time.Time
}

// NewExpectations returns empty expectations.
func NewExpectations() *Expectations {
	return &Expectations{m: map[string]*expectation{}, now: time.Now}
}

// Satisfied reports whether key has no outstanding creates or deletes, or
// its expectations expired, or it has none recorded.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	return (x.add <= 0 && x.del <= 0) || e.now().Sub(x.at) > ExpectationsTimeout
}

// ExpectCreations records that n creations were issued for key.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{add: n, at: e.now()}
}

// ExpectDeletions records that the pods podKeys are being deleted for key.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{del: len(podKeys), deletions: map[string]struct{}{}, at: e.now()}
	for _, k := range podKeys {
		x.deletions[k] = struct{}{}
	}
	e.m[key] = x
}

// CreationObserved lowers key's expected creations by one: a pod it made
// appeared, or a create failed or was skipped.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok && x.add > 0 {
		x.add--
	}
}

// DeletionObserved records that podKey is gone (or being deleted), if key
// was waiting for it.
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return
	}
	if _, waiting := x.deletions[podKey]; waiting {
		delete(x.deletions, podKey)
		x.del--
	}
}

// Delete forgets key (its controller object is gone).
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// Pending returns key's outstanding creations and deletions.
func (e *Expectations) Pending(key string) (add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		return x.add, x.del
	}
	return 0, 0
}

// Expect records that n creations and the deletion of the pods podKeys
// were issued together for key (a DaemonSet's sync does both).
func (e *Expectations) Expect(key string, n int, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{add: n, del: len(podKeys), deletions: map[string]struct{}{}, at: e.now()}
	for _, k := range podKeys {
		x.deletions[k] = struct{}{}
	}
	e.m[key] = x
}
