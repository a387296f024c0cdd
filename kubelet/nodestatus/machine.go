package nodestatus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Machine is one reading of the host the kubelet runs on: what the status
// reports and the pressure conditions are computed from.
type Machine struct {
	NumCPU int
	// MemoryCapacity is MemTotal, or the kubelet's cgroup memory limit when
	// that is lower (a kubelet in a container sees the container's limit).
	MemoryCapacity int64
	// MemoryAvailable is capacity minus the working set (kube's
	// memory.available signal).
	MemoryAvailable int64
	// FsCapacity and FsAvailable are of the filesystem of the root dir
	// (kube's nodefs); FsInodes and FsInodesFree likewise.
	FsCapacity, FsAvailable int64
	FsInodes, FsInodesFree  int64
	// PIDMax is kernel.pid_max and Processes the number of processes now.
	PIDMax, Processes int64

	KernelVersion string
	OSImage       string
	MachineID     string
	SystemUUID    string
	BootID        string
}

// Paths of the host files a reading consults; tests point them at fakes.
type hostPaths struct {
	proc, sys, etc string
}

var defaultPaths = hostPaths{proc: "/proc", sys: "/sys", etc: "/etc"}

// ReadMachine reads the host: /proc/meminfo and the memory cgroup, statfs
// of rootDir, uname, /etc/os-release, the machine and boot IDs.
func ReadMachine(rootDir string) (Machine, error) { return defaultPaths.read(rootDir) }

func (p hostPaths) read(rootDir string) (Machine, error) {
	m := Machine{NumCPU: runtime.NumCPU()}
	mi, err := readMeminfo(filepath.Join(p.proc, "meminfo"))
	if err != nil {
		return m, err
	}
	m.MemoryCapacity = mi["MemTotal"]
	m.MemoryAvailable = mi["MemAvailable"]
	if limit, usage, inactive, ok := p.cgroupMemory(); ok && limit < m.MemoryCapacity {
		m.MemoryCapacity = limit
		ws := usage - inactive
		if ws < 0 {
			ws = 0
		}
		m.MemoryAvailable = max(limit-ws, 0)
	}
	if rootDir == "" {
		rootDir = "/"
	}
	dir := rootDir
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err == nil {
			m.FsCapacity = int64(st.Blocks) * int64(st.Bsize)
			m.FsAvailable = int64(st.Bavail) * int64(st.Bsize)
			m.FsInodes = int64(st.Files)
			m.FsInodesFree = int64(st.Ffree)
			break
		} else if !errors.Is(err, syscall.ENOENT) || dir == "/" {
			return m, fmt.Errorf("statfs %s: %w", dir, err)
		}
		dir = filepath.Dir(dir) // the root dir may not exist yet: measure where it will be
	}
	if b, err := os.ReadFile(filepath.Join(p.proc, "sys/kernel/pid_max")); err == nil {
		m.PIDMax, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	if b, err := os.ReadFile(filepath.Join(p.proc, "loadavg")); err == nil {
		// "0.00 0.01 0.05 2/345 6789": the fourth field is running/total.
		if f := strings.Fields(string(b)); len(f) >= 4 {
			if _, total, ok := strings.Cut(f[3], "/"); ok {
				m.Processes, _ = strconv.ParseInt(total, 10, 64)
			}
		}
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err == nil {
		m.KernelVersion = utsString(u.Release[:])
	}
	m.OSImage = osImage(filepath.Join(p.etc, "os-release"))
	m.MachineID = firstLine(filepath.Join(p.etc, "machine-id"), "/var/lib/dbus/machine-id")
	m.SystemUUID = strings.ToLower(firstLine(filepath.Join(p.sys, "class/dmi/id/product_uuid")))
	m.BootID = firstLine(filepath.Join(p.proc, "sys/kernel/random/boot_id"))
	return m, nil
}

func utsString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// readMeminfo parses /proc/meminfo into bytes per key.
func readMeminfo(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			v *= 1024
		}
		out[key] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if out["MemTotal"] == 0 {
		return nil, fmt.Errorf("read %s: no MemTotal", path)
	}
	if _, ok := out["MemAvailable"]; !ok {
		out["MemAvailable"] = out["MemFree"] + out["Buffers"] + out["Cached"]
	}
	return out, nil
}

// cgroupMemory reads the limit, usage and inactive file pages of the memory
// cgroup the kubelet runs in (v2 unified, else v1), from its own
// /proc/self/cgroup entry. ok is false without a limit.
func (p hostPaths) cgroupMemory() (limit, usage, inactive int64, ok bool) {
	b, err := os.ReadFile(filepath.Join(p.proc, "self/cgroup"))
	if err != nil {
		return 0, 0, 0, false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dirs []string
		var limitFile, usageFile, inactiveKey string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dirs = []string{filepath.Join(p.sys, "fs/cgroup", parts[2]), filepath.Join(p.sys, "fs/cgroup")}
			limitFile, usageFile, inactiveKey = "memory.max", "memory.current", "inactive_file"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			dirs = []string{filepath.Join(p.sys, "fs/cgroup/memory", parts[2]), filepath.Join(p.sys, "fs/cgroup/memory")}
			limitFile, usageFile, inactiveKey = "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
		default:
			continue
		}
		// Inside a container the cgroup namespace shows "/" but the path as
		// seen from the host may not exist: fall back to the mount's root.
		for _, dir := range dirs {
			lb, err := os.ReadFile(filepath.Join(dir, limitFile))
			if err != nil {
				continue
			}
			l, err := strconv.ParseInt(strings.TrimSpace(string(lb)), 10, 64)
			if err != nil { // "max"
				return 0, 0, 0, false
			}
			ub, _ := os.ReadFile(filepath.Join(dir, usageFile))
			u, _ := strconv.ParseInt(strings.TrimSpace(string(ub)), 10, 64)
			return l, u, statValue(filepath.Join(dir, "memory.stat"), inactiveKey), true
		}
	}
	return 0, 0, 0, false
}

func statValue(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) == 2 && f[0] == key {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// osImage is PRETTY_NAME of os-release, as the kubelet reports it.
func osImage(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "Unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			if uq, err := strconv.Unquote(v); err == nil {
				return uq
			}
			return strings.Trim(v, `"'`)
		}
	}
	return "Unknown"
}

func firstLine(paths ...string) string {
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" {
				return s
			}
		}
	}
	return ""
}
