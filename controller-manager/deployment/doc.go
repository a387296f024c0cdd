// Package deployment is the Deployment controller: it rolls a Deployment's
// pod template out through ReplicaSets named NAME-HASH (RollingUpdate or
// Recreate), records revisions, cleans up old ReplicaSets and reports the
// Available and Progressing conditions, as kube's pkg/controller/deployment.
package deployment
