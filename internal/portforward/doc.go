// Package portforward is Kubernetes' port-forward protocol
// (portforward.k8s.io): SPDY streams in pairs, an error stream and a data
// stream per forwarded connection, matched by their requestID header and
// addressed by their port header. Serve is the kubelet's end; Client is
// kubectl's. The SPDY framing comes from k8s.io/streaming (moby/spdystream)
// and stays behind this package.
package portforward
