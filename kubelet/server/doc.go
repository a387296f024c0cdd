// Package server is the kubelet's HTTPS streaming server (port 10250): it
// authenticates the apiserver by its client certificate and serves
// /healthz, /pods, /containerLogs (CRI log files under the pod logs
// directory), /exec and /attach (WebSocket with the channel.k8s.io
// subprotocols v5, v4, v4.base64 and the older channel.k8s.io and
// base64.channel.k8s.io, chosen in the client's order; or SPDY/3.1 with v4.channel.k8s.io, kubectl's fallback) and
// /portForward (SPDY/3.1, portforward.k8s.io: the apiserver turns
// kubectl's SPDY-in-WebSocket tunnel into this).
package server
