// Package apiservertest starts a real apiserver with embedded etcd in a
// test's temp dir, on loopback ports, for integration tests of every
// component that talks to the API.
package apiservertest
