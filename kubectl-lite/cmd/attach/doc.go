// Package attach implements "kubectl-lite attach": the streams of a
// running container's main process over the apiserver's WebSocket attach
// stream; Run is shared with "kubectl-lite debug".
package attach
