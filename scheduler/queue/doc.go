// Package queue is the scheduling queue, after kube-scheduler's
// PriorityQueue: an active heap ordered by priority then enqueue time, a
// back-off heap with per-pod exponential back-off, and an unschedulable set
// whose pods move back when the cluster changes (or after five minutes).
package queue
