// Package disruption is kube-controller-manager's "disruption" controller:
// it keeps each PodDisruptionBudget's status (currentHealthy,
// desiredHealthy, expectedPods, disruptionsAllowed, the DisruptionAllowed
// condition) in step with the pods its selector matches and their
// controllers' scale, and forgets evictions (status.disruptedPods) once the
// apiserver's eviction has been seen through or has timed out. The
// apiserver's eviction subresource spends what this controller allows.
package disruption
