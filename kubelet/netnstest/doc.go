// Package netnstest builds a node's network out of Linux network
// namespaces for the tests of the node's rule writers (the service proxy,
// the NetworkPolicy enforcer): a node namespace with a bridge, pod
// namespaces on it, and helpers to run commands and code inside them. It
// needs root and iproute2/iptables; without them the test is skipped with
// the reason (scripts/deps.sh test installs them). Everything it makes is
// removed when the test ends.
package netnstest
