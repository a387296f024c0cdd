// Package integration holds the apiserver's integration tests: each starts a
// real apiserver with embedded etcd on loopback and drives it over HTTP the
// way clients do, including a standard Kubernetes client (client-go).
package integration
