// Package app is the scheduler daemon: kube-scheduler's flags, the API
// client, the health and metrics server, leader election on the
// kube-system/kube-scheduler Lease, and the scheduling loop run while
// leading.
package app
