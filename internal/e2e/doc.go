// Package e2e is minik8s's end-to-end suite: it starts the docker compose
// cluster of the repository root from a clean state (control plane and two
// node containers running containerd and the kubelet), drives it only with
// the built bin/kubectl-lite and the host's docker, and tears it down at the
// end, also on failure.
//
// The tests run only with MINIK8S_E2E=1 (make e2e sets it) or the -e2e flag,
// and skip with a message when docker or the built binaries are missing.
// MINIK8S_E2E_KEEP=1 leaves the cluster running afterwards for debugging;
// MINIK8S_E2E_HOST_NODE=0 skips the test that joins this machine itself as a
// node through scripts/install-node.sh.
package e2e
