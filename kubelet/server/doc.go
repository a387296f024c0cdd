// Package server is the kubelet's HTTPS streaming server (port 10250): it
// authenticates the apiserver by its client certificate and serves
// /healthz, /pods, /containerLogs (CRI log files under the pod logs
// directory) and /exec (WebSocket, channel.k8s.io subprotocols).
package server
