// Package nodename filters out every node but the one a pod names in
// spec.nodeName.
package nodename
