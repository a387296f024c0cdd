package runtime

import (
	"os"
	"path/filepath"
)

// RemoveCgroup removes the cgroup directory rel (a pod's, such as
// /minik8s/pod<UID>) and the container cgroups left in it, deepest first,
// in every hierarchy: each controller's under /sys/fs/cgroup on cgroup v1,
// /sys/fs/cgroup itself on v2. Directories still holding tasks stay.
func RemoveCgroup(rel string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*")
	roots = append(roots, "/sys/fs/cgroup")
	for _, root := range roots {
		dir := filepath.Join(root, rel)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		_ = os.Remove(dir)
	}
}
