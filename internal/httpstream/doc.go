// Package httpstream is Kubernetes' SPDY streaming protocols, kept behind
// one package (the SPDY framing comes from k8s.io/streaming, over
// moby/spdystream):
//
//   - port-forward (portforward.k8s.io): streams in pairs, an error stream
//     and a data stream per forwarded connection, matched by their
//     requestID header and addressed by their port header.
//     ServePortForward is the kubelet's end; Client is kubectl's.
//   - remote command (v4.channel.k8s.io over SPDY): one stream per stdin,
//     stdout, stderr, resize and error, the protocol kubectl falls back to
//     for exec and attach when a WebSocket cannot be had.
//     ServeRemoteCommand is the kubelet's end.
package httpstream
