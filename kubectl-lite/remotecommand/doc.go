// Package remotecommand is the client side of Kubernetes' exec streaming
// protocol over WebSocket (subprotocols v5.channel.k8s.io and
// v4.channel.k8s.io): binary messages whose first byte is the channel
// (0 stdin, 1 stdout, 2 stderr, 3 error Status, 4 terminal resize; in v5,
// 255 closes the channel named by the second byte). gorilla/websocket is
// used here and nowhere else in kubectl-lite.
package remotecommand
