package cacher

import "sort"

// ring keeps the most recent events, oldest first, up to max. Its backing
// array grows as events arrive, so an idle resource keeps a small one.
type ring struct {
	buf   []*event
	start int // index of the oldest event
	n     int
	max   int
}

func (r *ring) reset() {
	r.buf, r.start, r.n = nil, 0, 0
}

// at returns the i-th oldest event.
func (r *ring) at(i int) *event { return r.buf[(r.start+i)%len(r.buf)] }

// push appends e and returns the event it evicted, if the ring was full.
func (r *ring) push(e *event) (evicted *event) {
	if r.n == len(r.buf) && len(r.buf) < r.max {
		grown := make([]*event, min(r.max, max(16, 2*len(r.buf))))
		for i := range r.n {
			grown[i] = r.at(i)
		}
		r.buf, r.start = grown, 0
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = e
		r.n++
		return nil
	}
	evicted = r.buf[r.start]
	r.buf[r.start] = e
	r.start = (r.start + 1) % len(r.buf)
	return evicted
}

// since returns, oldest first, the events with a revision above rev.
func (r *ring) since(rev int64) []*event {
	i := sort.Search(r.n, func(i int) bool { return r.at(i).rev > rev })
	out := make([]*event, 0, r.n-i)
	for ; i < r.n; i++ {
		out = append(out, r.at(i))
	}
	return out
}

func (r *ring) len() int      { return r.n }
func (r *ring) capacity() int { return len(r.buf) }
