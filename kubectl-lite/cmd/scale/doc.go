// Package scale implements "kubectl-lite scale": it sets the replicas of
// deployments and replica sets through their /scale subresource.
package scale
