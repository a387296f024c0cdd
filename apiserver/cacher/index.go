package cacher

// watcherSet is a set of watchers.
type watcherSet map[*Watcher]struct{}

// watcherIndex finds the watchers an event may concern. Each watcher sits
// in one bucket, by its most selective exact-match hint: an indexed field
// value, else a name, else a namespace, else the catch-all. Watchers that
// allow bookmarks are also listed in bookmarkers.
type watcherIndex struct {
	all         watcherSet
	byField     map[string]map[string]watcherSet
	byName      map[string]watcherSet
	byNamespace map[string]watcherSet
	bookmarkers watcherSet
}

func newWatcherIndex() watcherIndex {
	return watcherIndex{
		all:         watcherSet{},
		byField:     map[string]map[string]watcherSet{},
		byName:      map[string]watcherSet{},
		byNamespace: map[string]watcherSet{},
		bookmarkers: watcherSet{},
	}
}

func (x *watcherIndex) add(w *Watcher) {
	p := &w.pred
	switch {
	case p.IndexField != "":
		m := x.byField[p.IndexField]
		if m == nil {
			m = map[string]watcherSet{}
			x.byField[p.IndexField] = m
		}
		addTo(m, p.IndexValue, w)
	case p.Name != "":
		addTo(x.byName, p.Name, w)
	case p.Namespace != "":
		addTo(x.byNamespace, p.Namespace, w)
	default:
		x.all[w] = struct{}{}
	}
	if w.allowBookmarks {
		x.bookmarkers[w] = struct{}{}
	}
}

func addTo(m map[string]watcherSet, k string, w *Watcher) {
	s := m[k]
	if s == nil {
		s = watcherSet{}
		m[k] = s
	}
	s[w] = struct{}{}
}

func removeFrom(m map[string]watcherSet, k string, w *Watcher) {
	if s := m[k]; s != nil {
		delete(s, w)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

func (x *watcherIndex) remove(w *Watcher) {
	p := &w.pred
	switch {
	case p.IndexField != "":
		if m := x.byField[p.IndexField]; m != nil {
			removeFrom(m, p.IndexValue, w)
			if len(m) == 0 {
				delete(x.byField, p.IndexField)
			}
		}
	case p.Name != "":
		removeFrom(x.byName, p.Name, w)
	case p.Namespace != "":
		removeFrom(x.byNamespace, p.Namespace, w)
	default:
		delete(x.all, w)
	}
	delete(x.bookmarkers, w)
}

func (x *watcherIndex) len() int {
	n := len(x.all)
	for _, m := range x.byField {
		for _, s := range m {
			n += len(s)
		}
	}
	for _, s := range x.byName {
		n += len(s)
	}
	for _, s := range x.byNamespace {
		n += len(s)
	}
	return n
}

func (x *watcherIndex) list() []*Watcher {
	out := make([]*Watcher, 0, x.len())
	for w := range x.all {
		out = append(out, w)
	}
	for _, m := range x.byField {
		for _, s := range m {
			for w := range s {
				out = append(out, w)
			}
		}
	}
	for _, m := range []map[string]watcherSet{x.byName, x.byNamespace} {
		for _, s := range m {
			for w := range s {
				out = append(out, w)
			}
		}
	}
	return out
}

// candidates appends to buf the watchers whose bucket matches the new or
// the previous version of ev's object; each appears once.
func (x *watcherIndex) candidates(ev *event, buf []*Watcher) []*Watcher {
	for w := range x.all {
		buf = append(buf, w)
	}
	for f, m := range x.byField {
		v := ev.obj.Fields[f]
		buf = appendSet(buf, m[v])
		if ev.prev != nil {
			if pv := ev.prev.Fields[f]; pv != v {
				buf = appendSet(buf, m[pv])
			}
		}
	}
	buf = appendSet(buf, x.byName[ev.obj.Name])
	if ev.prev != nil && ev.prev.Name != ev.obj.Name {
		buf = appendSet(buf, x.byName[ev.prev.Name])
	}
	buf = appendSet(buf, x.byNamespace[ev.obj.Namespace])
	if ev.prev != nil && ev.prev.Namespace != ev.obj.Namespace {
		buf = appendSet(buf, x.byNamespace[ev.prev.Namespace])
	}
	return buf
}

func appendSet(buf []*Watcher, s watcherSet) []*Watcher {
	for w := range s {
		buf = append(buf, w)
	}
	return buf
}
