// Package version reports the build's version in the shape of Kubernetes'
// /version document: the Kubernetes release minik8s implements (what
// clients, charts and skew checks compare against), with minik8s' own
// release, set at link time by the Makefile, in the semver build metadata.
package version
