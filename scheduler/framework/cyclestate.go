package framework

// StateKey names a plugin's entry in the CycleState.
type StateKey string

type stateEntry struct {
	key   StateKey
	value any
}

// CycleState carries data between the extension points of one scheduling
// cycle. It is written only by PreFilter and PreScore (one goroutine) and
// read by Filter and Score (many goroutines), so it needs no lock. It holds
// a handful of entries, kept in a slice: a linear scan with constant keys
// beats hashing for every node of every cycle.
type CycleState struct {
	data []stateEntry
	// SkipFilter and SkipScore name the plugins whose PreFilter/PreScore
	// returned Skip.
	SkipFilter, SkipScore map[string]bool
	// SkipPreBind names the plugins whose PreBindPreFlight returned Skip.
	SkipPreBind map[string]bool
	// filters are the Filter plugins not skipped, set by RunPreFilterPlugins.
	filters []FilterPlugin
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{SkipFilter: map[string]bool{}, SkipScore: map[string]bool{}, SkipPreBind: map[string]bool{}}
}

// Write stores v under key.
func (c *CycleState) Write(key StateKey, v any) {
	for i := range c.data {
		if c.data[i].key == key {
			c.data[i].value = v
			return
		}
	}
	c.data = append(c.data, stateEntry{key, v})
}

// Read returns the value under key.
func (c *CycleState) Read(key StateKey) (any, bool) {
	for i := range c.data {
		if c.data[i].key == key {
			return c.data[i].value, true
		}
	}
	return nil, false
}

// Cloner is implemented by state values that PreFilterExtensions change,
// so a copy of the state can be changed without touching the original.
type Cloner interface {
	Clone() any
}

// Clone returns a copy of the state for a what-if (a preemption's dry run,
// nominated pods added): values implementing Cloner are cloned, others
// shared (they must then be read-only).
func (c *CycleState) Clone() *CycleState {
	out := &CycleState{
		data:        make([]stateEntry, len(c.data)),
		SkipFilter:  make(map[string]bool, len(c.SkipFilter)),
		SkipScore:   make(map[string]bool, len(c.SkipScore)),
		SkipPreBind: make(map[string]bool, len(c.SkipPreBind)),
		filters:     c.filters,
	}
	for i, e := range c.data {
		if cl, ok := e.value.(Cloner); ok {
			e.value = cl.Clone()
		}
		out.data[i] = e
	}
	for k, v := range c.SkipFilter {
		out.SkipFilter[k] = v
	}
	for k, v := range c.SkipScore {
		out.SkipScore[k] = v
	}
	for k, v := range c.SkipPreBind {
		out.SkipPreBind[k] = v
	}
	return out
}
