// Package e2e holds the end-to-end test of the kubelet's node side and
// streaming server with the real pod manager and the containerd driver; it
// is a separate package so the server's own tests do not depend on a
// runtime driver.
package e2e
