// Package token implements "kubectl-lite token create|list|delete", the
// bootstrap tokens a new node joins with (kubeadm's token commands).
package token
