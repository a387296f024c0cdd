package framework

// StateKey names a plugin's entry in the CycleState.
type StateKey string

// CycleState carries data between the extension points of one scheduling
// cycle. It is written only by PreFilter and PreScore (one goroutine) and
// read by Filter and Score (many goroutines), so it needs no lock.
type CycleState struct {
	data map[StateKey]any
	// SkipFilter and SkipScore name the plugins whose PreFilter/PreScore
	// returned Skip.
	SkipFilter, SkipScore map[string]bool
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{data: map[StateKey]any{}, SkipFilter: map[string]bool{}, SkipScore: map[string]bool{}}
}

// Write stores v under key.
func (c *CycleState) Write(key StateKey, v any) { c.data[key] = v }

// Read returns the value under key.
func (c *CycleState) Read(key StateKey) (any, bool) {
	v, ok := c.data[key]
	return v, ok
}
