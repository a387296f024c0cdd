// Package controllertest runs controller-manager controllers in-process
// against a real apiserver (apiservertest) for integration tests, with the
// simulated kubelet pieces those tests need: nodes whose Lease and Ready
// heartbeat a goroutine renews, and pod status written as a kubelet would.
package controllertest
