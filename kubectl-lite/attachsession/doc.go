// Package attachsession is one "attach" to a running container as kubectl
// runs it, shared by "kubectl-lite attach" and "kubectl-lite debug": the
// container defaulted as kubectl does, the terminal setting following the
// container's (-t to a container without one refused in kubectl's words,
// a container with one given a terminal regardless), kubectl's prompt hint
// first and its reattach hint after a terminal session, and the streams
// carried over the apiserver's pods/attach WebSocket stream by package
// remotecommand.
package attachsession
