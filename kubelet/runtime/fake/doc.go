// Package fake is an in-memory container runtime driver: it implements
// kubelet/runtime's Runtime (with Adopter, Execer and CgroupCleaner)
// without containers, and records what it was asked ("Verb pod/container"
// strings) so a test can compare the actions. It starts nothing: a test, or
// a "hollow node" kubelet that runs pods on paper, decides when containers
// exit (Exit) and when the node loses every task (Reboot). The pod
// manager's unit tests drive it; it links no driver library.
package fake
