// Package taint implements "kubectl-lite taint": adding, replacing and
// removing node taints (KEY[=VALUE]:EFFECT, KEY[:EFFECT]-) on named nodes,
// nodes matching -l, or --all, with kubectl's parsing, checks, messages and
// its tainted/untainted/modified report.
package taint
