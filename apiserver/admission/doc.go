// Package admission runs the apiserver's admission chain: after a request is
// authenticated and authorized, and before it is persisted, each mutating
// plugin may change the object and each validating plugin may refuse it.
// Plugins are small named units; the server runs all mutating ones, then all
// validating ones, in the order configured.
package admission
