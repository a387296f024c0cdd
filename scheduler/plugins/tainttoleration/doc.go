// Package tainttoleration filters out nodes with NoSchedule or NoExecute
// taints the pod does not tolerate, and prefers nodes with fewer
// untolerated PreferNoSchedule taints.
package tainttoleration
