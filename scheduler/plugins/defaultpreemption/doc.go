// Package defaultpreemption is kube-scheduler's DefaultPreemption PostFilter
// plugin: when no node fits a pod, it looks for nodes where evicting pods
// of lower priority would make room (dry-running the filters with those
// pods removed, then reprieving as many as still fit, PodDisruptionBudget
// violators first and the most important first), picks one node by kube's
// criteria (fewest PDB violations, lowest highest victim priority, smallest
// priority sum, fewest victims, latest start), marks each victim with the
// DisruptionTarget condition, deletes it, and nominates the node to the
// preemptor, which the scheduler retries once the victims are gone.
package defaultpreemption
