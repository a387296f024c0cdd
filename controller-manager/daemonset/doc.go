// Package daemonset is the DaemonSet controller: one pod on every node
// that its nodeSelector, required node affinity and taints (against the
// template's tolerations plus those kube adds to every daemon pod) admit,
// following nodes as they join, leave and change. Pods are placed by the
// scheduler through a required node affinity on metadata.name, as kube
// does. Updates roll node by node within maxUnavailable, or surge a new
// pod beside the old one within maxSurge; OnDelete waits for the user.
// Templates are kept as ControllerRevisions. It follows kube's
// pkg/controller/daemon.
package daemonset
