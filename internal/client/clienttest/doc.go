// Package clienttest is an in-memory apiserver for unit tests of components
// built on internal/client: controllers, the scheduler, the kubelet's API
// side. It speaks the same REST contract as the real apiserver for every kind
// in api.Resources (get, list, create, update, status update, merge /
// strategic / JSON patch, delete, deletecollection, watch with
// resourceVersions, label and field selectors, pods/binding) and records
// every request as an Action, so tests can seed objects, run a sync and
// compare the actions, the way sample-controller's tests use a fake
// clientset.
//
// It is deliberately small: no admission, defaulting or validation, no
// graceful deletion (finalizers only delay removal), no paging, and watch
// history is kept forever. Reactors let a test inject errors or answers.
// Integration tests that need real semantics use the real apiserver
// (apiserver/apiservertest).
package clienttest
