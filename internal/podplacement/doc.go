// Package podplacement holds the predicates that decide whether a pod may
// be placed on a node: its nodeSelector and required node affinity, and
// its tolerations against the node's taints. They are the same rules
// wherever they are asked (Kubernetes keeps them in
// k8s.io/component-helpers/scheduling/corev1), so the scheduler's filter
// and score plugins and the DaemonSet controller's "should this node run a
// daemon pod" both import this package instead of one another.
package podplacement
