// Package replicationcontroller is kube's ReplicationController controller
// ("replicationcontroller" in --controllers). As in kube, it is the
// ReplicaSet controller run over core/v1 ReplicationControllers through a
// conversion: an RC is read as a ReplicaSet (its map selector as
// matchLabels) and the ReplicaSet status computed for it (replicas,
// fullyLabeledReplicas, readyReplicas, availableReplicas,
// observedGeneration, the ReplicaFailure condition) is written back as the
// RC's status. Its pods carry controllerRefs of kind ReplicationController
// and its events come from "replication-controller".
package replicationcontroller
