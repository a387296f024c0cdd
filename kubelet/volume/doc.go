// Package volume writes the kubelet's API-backed volumes — configMap,
// secret, downwardAPI and projected (with service account tokens) — the
// way kube's volume plugins do: a payload of files is computed from the
// pod and the objects it names, then published whole by an AtomicWriter
// (a "..data" symlink swapped to a new timestamped directory), so a
// container never sees half of an update. The kubelet re-runs the set-up
// periodically; an unchanged payload writes nothing. SetVolumeOwnership
// gives a volume to the pod's fsGroup as kube's does.
package volume
