package app

import "path/filepath"

// RuntimeStateDir is where the runtime keeps what must not outlive a boot
// (task FIFOs, host-network sandbox markers): tmpfs /run, one directory per
// containerd namespace so kubelets sharing a containerd stay apart.
func RuntimeStateDir(namespace string) string {
	return filepath.Join("/run/minik8s", namespace)
}
