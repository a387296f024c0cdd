// Package clientintegration holds the integration tests of the client
// machinery (internal/client, informer, cache, workqueue, leaderelection,
// kubeconfig) against a real apiserver with embedded etcd, started in-process
// on loopback by apiservertest. The unit tests of those packages run against
// httptest fakes; these tests check that the fakes' assumptions hold for the
// real server: error mapping, selectors, paging, subresources, watch resumption,
// re-list after 410 Expired, and Lease-based leader election.
//
// The package has no non-test code. Every test needs etcd and is skipped with
// -short.
package clientintegration
