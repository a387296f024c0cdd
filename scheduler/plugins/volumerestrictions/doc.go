// Package volumerestrictions is kube-scheduler's VolumeRestrictions
// plugin: a claim with the ReadWriteOncePod access mode is used by one pod
// of the cluster at a time, and the in-tree disks that attach to one node
// (GCE PD, AWS EBS, RBD, iSCSI) are not used twice on a node unless both
// uses are read-only.
package volumerestrictions
