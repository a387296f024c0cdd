// Package volumezone is kube-scheduler's VolumeZone plugin: a pod whose
// claims are bound to volumes labelled with a zone or region (the
// topology.kubernetes.io labels or their failure-domain.beta twins) goes
// only to nodes labelled with one of those zones or regions.
package volumezone
