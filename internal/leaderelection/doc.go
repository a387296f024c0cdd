// Package leaderelection lets one of several replicas of a component (the
// scheduler, the controller-manager) do the work, coordinated through a
// coordination.k8s.io/v1 Lease, as client-go's leaderelection with a
// LeaseLock does.
//
// A candidate takes the Lease when it is unheld or expired, then renews it
// every RetryPeriod. Expiry is judged by the candidate's own clock: the lease
// counts as held for LeaseDuration after the candidate last saw it change
// (its resourceVersion), never by comparing renewTime with the local clock,
// so clock skew between machines does not matter. Every write carries the
// resourceVersion that was read; a 409 Conflict means another candidate won
// the race. A leader that cannot renew for RenewDeadline stops leading: its
// OnStartedLeading context is cancelled and OnStoppedLeading runs, and it
// must stop acting as leader, because after LeaseDuration another candidate
// may take over.
package leaderelection
