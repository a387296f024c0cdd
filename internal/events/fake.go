package events

import (
	"fmt"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// FakeRecorder records events as "TYPE REASON MESSAGE" strings, for unit tests.
type FakeRecorder struct {
	mu     sync.Mutex
	events []string
}

// Event implements Recorder.
func (f *FakeRecorder) Event(obj api.Object, eventType, reason, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, eventType+" "+reason+" "+message)
}

// Eventf implements Recorder.
func (f *FakeRecorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	f.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

// Events returns what was recorded so far, in order.
func (f *FakeRecorder) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}
