// Package e2e holds the end-to-end test of the kubelet's node side and
// streaming server with the real pod manager and containerd; it is a
// separate package so the server's own tests do not depend on the runtime.
package e2e
