package nodestatus

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadMachine(t *testing.T) {
	t.Parallel()
	const meminfo = "MemTotal:        8000000 kB\nMemFree:  1000 kB\nMemAvailable:    6000000 kB\n"
	tests := []struct {
		name          string
		cgroup        string
		files         map[string]string
		wantCap       int64
		wantAvailable int64
	}{
		{name: "host", cgroup: "0::/user.slice\n", wantCap: 8000000 * 1024, wantAvailable: 6000000 * 1024},
		{name: "cgroup v1 limit lower than the host", cgroup: "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n",
			files: map[string]string{
				"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "1073741824\n",
				"sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": "536870912\n",
				"sys/fs/cgroup/memory/docker/abc/memory.stat":           "cache 1\ntotal_inactive_file 268435456\n",
			}, wantCap: 1 << 30, wantAvailable: 1<<30 - (1<<29 - 1<<28)},
		{name: "cgroup v2 at the namespace root", cgroup: "0::/\n",
			files: map[string]string{
				"sys/fs/cgroup/memory.max":     "2147483648\n",
				"sys/fs/cgroup/memory.current": "1073741824\n",
				"sys/fs/cgroup/memory.stat":    "anon 1\ninactive_file 0\n",
			}, wantCap: 2 << 30, wantAvailable: 1 << 30},
		{name: "cgroup v2 without a limit", cgroup: "0::/\n",
			files:   map[string]string{"sys/fs/cgroup/memory.max": "max\n"},
			wantCap: 8000000 * 1024, wantAvailable: 6000000 * 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "proc/meminfo"), meminfo)
			write(t, filepath.Join(dir, "proc/self/cgroup"), tt.cgroup)
			write(t, filepath.Join(dir, "proc/sys/kernel/pid_max"), "4194304\n")
			write(t, filepath.Join(dir, "proc/loadavg"), "0.10 0.20 0.30 3/456 7890\n")
			write(t, filepath.Join(dir, "proc/sys/kernel/random/boot_id"), "b00t\n")
			write(t, filepath.Join(dir, "etc/os-release"), "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")
			write(t, filepath.Join(dir, "etc/machine-id"), "abc123\n")
			for p, c := range tt.files {
				write(t, filepath.Join(dir, p), c)
			}
			p := hostPaths{proc: filepath.Join(dir, "proc"), sys: filepath.Join(dir, "sys"), etc: filepath.Join(dir, "etc")}
			m, err := p.read(filepath.Join(dir, "var/lib/kubelet")) // does not exist: measured at its parent
			if err != nil {
				t.Fatal(err)
			}
			if m.MemoryCapacity != tt.wantCap || m.MemoryAvailable != tt.wantAvailable {
				t.Errorf("memory capacity %d available %d, want %d %d", m.MemoryCapacity, m.MemoryAvailable, tt.wantCap, tt.wantAvailable)
			}
			if m.PIDMax != 4194304 || m.Processes != 456 || m.BootID != "b00t" || m.MachineID != "abc123" ||
				m.OSImage != "Debian GNU/Linux 12 (bookworm)" || m.FsCapacity <= 0 || m.KernelVersion == "" || m.NumCPU <= 0 {
				t.Errorf("reading = %+v", m)
			}
		})
	}
}
