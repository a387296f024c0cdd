package authn

import (
	"container/list"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"sync"
	"time"
)

// The verification cache's bounds: how long a success is trusted at most
// and how many chains are remembered. 8192 covers a 5,000-node cluster
// whose kubelets each hold their own certificate, plus the control plane,
// without the LRU cycling through more chains than it holds; an entry is a
// few hundred bytes, so the cache stays near 2 MB at worst.
const (
	verifiedChainTTL  = 2 * time.Minute
	verifiedChainsMax = 8192
)

// verifyCache remembers which presented certificate chains verified against
// which root pool, so that a chain presented on every request (hollow nodes
// share a few HTTP/2 connections and impersonate, kubelets and controllers
// keep theirs for hours) is verified once, not per request.
//
// kube-apiserver (k8s.io/apiserver pkg/authentication/request/x509) does
// not cache: it calls Verify on every request. This cache is ours, built so
// that an answer from it is the one Verify would give at the same instant:
//
//   - The key is a SHA-256 of every presented certificate's DER, leaf and
//     intermediates in order, each with its length, together with the root
//     pool's pointer. A different or tampered chain, even with the same
//     leaf subject, is another key and is verified afresh; a new pool (a
//     reloaded CA bundle is a new *x509.CertPool) never reuses an old
//     pool's results. The entry keeps the pool alive, so its address cannot
//     be taken by another pool while the entry exists. A pool can only gain
//     roots, never lose them, so its own successes stay true.
//   - A success holds only while the clock (the authenticator's, so tests
//     inject it) is inside every verified chain's validity window — from the
//     latest NotBefore to the earliest NotAfter of every certificate in
//     every chain Verify returned, root included — and for verifiedChainTTL
//     after the verification at most. Past either, Verify runs again, so a
//     certificate that expires fails as it would have uncached.
//   - Failures are not cached: every bad chain is verified (and refused)
//     again, as kube does.
//   - At most verifiedChainsMax entries, least recently used evicted first.
//
// Two requests that miss at once both verify; the second store wins. It is
// safe for concurrent use; the zero value is ready.
type verifyCache struct {
	mu      sync.Mutex
	entries map[verifyKey]*list.Element // of *verifiedChain
	lru     list.List                   // front: most recently used
	max     int                         // 0: verifiedChainsMax
	ttl     time.Duration               // 0: verifiedChainTTL
}

// verifyKey is a presented chain (chainDigest) verified against a root pool.
type verifyKey struct {
	chain [sha256.Size]byte
	roots *x509.CertPool
}

// verifiedChain is a success and how long it holds.
type verifiedChain struct {
	key       verifyKey
	notBefore time.Time // latest NotBefore in the verified chains
	notAfter  time.Time // earliest NotAfter in the verified chains
	expires   time.Time // verification time + ttl
}

// chainDigest is the SHA-256 of the presented chain: each certificate's
// length then its DER, so that no two chains share a digest input.
func chainDigest(certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	var n [4]byte
	for _, c := range certs {
		binary.BigEndian.PutUint32(n[:], uint32(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// verified says whether key verified at a time whose answer still holds at
// now. An entry that no longer holds is dropped.
func (c *verifyCache) verified(key verifyKey, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return false
	}
	v := e.Value.(*verifiedChain)
	// Verify refuses now before NotBefore or after NotAfter (both bounds
	// inclusive of validity); the TTL counts from the verification.
	if now.Before(v.notBefore) || now.After(v.notAfter) || !now.Before(v.expires) {
		c.lru.Remove(e)
		delete(c.entries, key)
		return false
	}
	c.lru.MoveToFront(e)
	return true
}

// add remembers that key verified at now into chains.
func (c *verifyCache) add(key verifyKey, now time.Time, chains [][]*x509.Certificate) {
	v := &verifiedChain{key: key, expires: now.Add(c.timeToLive())}
	first := true
	for _, chain := range chains {
		for _, cert := range chain {
			if first || cert.NotBefore.After(v.notBefore) {
				v.notBefore = cert.NotBefore
			}
			if first || cert.NotAfter.Before(v.notAfter) {
				v.notAfter = cert.NotAfter
			}
			first = false
		}
	}
	if first {
		return // no chain: nothing to bound the answer by
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[verifyKey]*list.Element)
	}
	if e, ok := c.entries[key]; ok {
		e.Value = v
		c.lru.MoveToFront(e)
		return
	}
	c.entries[key] = c.lru.PushFront(v)
	for c.lru.Len() > c.capacity() {
		oldest := c.lru.Back()
		c.lru.Remove(oldest)
		delete(c.entries, oldest.Value.(*verifiedChain).key)
	}
}

// len is the number of remembered chains.
func (c *verifyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func (c *verifyCache) capacity() int {
	if c.max > 0 {
		return c.max
	}
	return verifiedChainsMax
}

func (c *verifyCache) timeToLive() time.Duration {
	if c.ttl > 0 {
		return c.ttl
	}
	return verifiedChainTTL
}
