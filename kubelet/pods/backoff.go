package pods

import (
	"time"

	"github.com/minik8s/minik8s/internal/backoff"
)

// Backoff paces container restarts (kube's CrashLoopBackOff).
type Backoff = backoff.Backoff

// NewBackoff returns a back-off; resetAfter 0 means 2×max.
func NewBackoff(initial, max, resetAfter time.Duration) *Backoff {
	return backoff.New(initial, max, resetAfter)
}
