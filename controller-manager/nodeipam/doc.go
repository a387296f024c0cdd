// Package nodeipam is the node IPAM controller: it gives every Node without
// one a spec.podCIDR (and spec.podCIDRs) carved from --cluster-cidr in
// blocks of --node-cidr-mask-size, rebuilding its allocation map from the
// existing nodes at start and releasing a node's block when it is deleted.
package nodeipam
