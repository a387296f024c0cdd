// Package replicaset is the ReplicaSet controller: it keeps exactly
// spec.replicas active pods matching each ReplicaSet's selector, as kube's
// pkg/controller/replicaset does.
package replicaset
