// Package portforward is kubectl-lite's port-forward client: it opens the
// pod's portforward subresource as SPDY tunneled in a WebSocket
// ("SPDY/3.1+portforward.k8s.io", as kubectl >= 1.31 does), listens on
// local ports and carries each accepted connection as a stream pair to the
// pod's port (internal/portforward speaks the protocol).
package portforward
