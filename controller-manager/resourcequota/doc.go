// Package resourcequota is kube-controller-manager's resourcequota
// controller: it keeps every ResourceQuota's status (hard: the spec's
// limits; used: what the namespace's stored objects consume of each,
// counted by package quota as the apiserver's admission charges it).
//
// A quota is recomputed when it is created or its spec.hard changes, when
// an object it may count is deleted or changes what it consumes
// (replenishment: a pod turning terminal frees its cpu and "pods"), and
// every --resource-quota-sync-period (5m) in any case. Objects come from
// shared informers for the kinds quotas usually name (pods, services,
// claims, config maps, secrets, replication controllers, quotas and the
// apps and batch workloads); a count/RESOURCE.GROUP of another kind is
// listed from the apiserver at each sync, and replenished only by the
// periodic sync; custom resources are found through discovery.
package resourcequota
