// Package cp implements "kubectl-lite cp": files and directories copied
// to and from containers as a tar stream through exec, as kubectl does
// (the container needs a tar binary).
package cp
