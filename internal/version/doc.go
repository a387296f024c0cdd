// Package version reports the build's version, set at link time by the
// Makefile, in the shape of Kubernetes' /version document.
package version
