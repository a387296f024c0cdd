// Package routes gives the node host-gateway pod networking: for every other
// Node it keeps a kernel route to that node's spec.podCIDR via the node's
// InternalIP, so pods reach pods on other nodes without NAT.
package routes
