// Package network wires pod network namespaces with CNI (libcni and the
// standard bridge, host-local, loopback and portmap plugins): it writes the
// node's conflist for its podCIDR and adds or deletes a pod's attachment.
// It also dials ports inside a pod's network namespace (DialInNetNS, for
// port-forward), which needs only the namespace's path and so works with
// any container runtime driver.
package network
