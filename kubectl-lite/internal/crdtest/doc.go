// Package crdtest is the custom-resource set-up kubectl-lite's
// integration tests share: it creates CustomResourceDefinitions on a test
// apiserver and waits until their kinds are served, since a CRD is
// accepted before the apiserver serves its resource and a test that drives
// a CLI (kubectl-lite or the real kubectl, through discovery) right away
// would see "the server doesn't have a resource type".
package crdtest
