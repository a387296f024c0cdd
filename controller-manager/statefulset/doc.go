// Package statefulset is the StatefulSet controller: pods NAME-0..N-1 with
// stable names, hostnames and claims from volumeClaimTemplates, created in
// order (OrderedReady: each waits for its predecessors to be Running and
// Ready; Parallel: all at once) and removed from the highest ordinal down;
// updates roll from the highest ordinal to the partition (RollingUpdate)
// or wait for the user to delete pods (OnDelete); every template is kept as
// a ControllerRevision, pruned to revisionHistoryLimit. It follows kube's
// pkg/controller/statefulset.
package statefulset
