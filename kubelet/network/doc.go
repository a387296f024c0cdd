// Package network wires pod network namespaces with CNI (libcni and the
// standard bridge, host-local, loopback and portmap plugins): it writes the
// node's conflist for its podCIDR and adds or deletes a pod's attachment.
package network
