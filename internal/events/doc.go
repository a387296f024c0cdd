// Package events records core/v1 Events about API objects the way client-go's
// EventRecorder does: callers never block, repeats of the same event are
// folded into one Event whose count and lastTimestamp grow, and writes happen
// in the background through the apiserver.
package events
