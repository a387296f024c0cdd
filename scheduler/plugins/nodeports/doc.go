// Package nodeports filters out nodes where a host port the pod asks for
// (containers[].ports[].hostPort) is already in use.
package nodeports
