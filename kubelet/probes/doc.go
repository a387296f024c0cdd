// Package probes runs a container's liveness, readiness and startup probes
// (exec, httpGet, tcpSocket) on their schedule and keeps each probe's result
// with Kubernetes' success and failure thresholds.
package probes
