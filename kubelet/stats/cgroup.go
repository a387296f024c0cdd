package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// usage is one reading of a cgroup (or the node).
type usage struct {
	cpuNanos    uint64 // cumulative CPU time
	memUsage    uint64 // usage including page cache
	workingSet  uint64 // usage less inactive file pages
	rss         uint64
	pageFaults  uint64
	majorFaults uint64
	memLimit    uint64 // 0: none
	pids        uint64
	havePids    bool
}

// cgroupFS reads cgroups under root ("/sys/fs/cgroup"), v1 or v2.
type cgroupFS struct {
	root string
	v2   bool
}

func newCgroupFS(root string) cgroupFS {
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	return cgroupFS{root: root, v2: err == nil}
}

// read returns the usage of cgroup path (relative to the hierarchy roots,
// "/minik8s/podUID/ID"; "/" is the root).
func (fs cgroupFS) read(path string) (usage, error) {
	if fs.v2 {
		return fs.readV2(path)
	}
	return fs.readV1(path)
}

func (fs cgroupFS) readV1(path string) (usage, error) {
	var u usage
	var err error
	if u.cpuNanos, err = readUint(filepath.Join(fs.root, "cpuacct", path, "cpuacct.usage")); err != nil {
		return u, err
	}
	mem := filepath.Join(fs.root, "memory", path)
	if u.memUsage, err = readUint(filepath.Join(mem, "memory.usage_in_bytes")); err != nil {
		return u, err
	}
	st, err := readKeyed(filepath.Join(mem, "memory.stat"))
	if err != nil {
		return u, err
	}
	u.workingSet = sub(u.memUsage, st["total_inactive_file"])
	u.rss = st["total_rss"]
	u.pageFaults, u.majorFaults = st["total_pgfault"], st["total_pgmajfault"]
	if lim, err := readUint(filepath.Join(mem, "memory.limit_in_bytes")); err == nil && lim < 1<<62 {
		u.memLimit = lim
	}
	if n, err := readUint(filepath.Join(fs.root, "pids", path, "pids.current")); err == nil {
		u.pids, u.havePids = n, true
	}
	return u, nil
}

func (fs cgroupFS) readV2(path string) (usage, error) {
	var u usage
	dir := filepath.Join(fs.root, path)
	cpu, err := readKeyed(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return u, err
	}
	u.cpuNanos = cpu["usage_usec"] * 1000
	if u.memUsage, err = readUint(filepath.Join(dir, "memory.current")); err != nil {
		return u, err
	}
	st, err := readKeyed(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return u, err
	}
	u.workingSet = sub(u.memUsage, st["inactive_file"])
	u.rss = st["anon"]
	u.pageFaults, u.majorFaults = st["pgfault"], st["pgmajfault"]
	if lim, err := readUint(filepath.Join(dir, "memory.max")); err == nil {
		u.memLimit = lim
	}
	if n, err := readUint(filepath.Join(dir, "pids.current")); err == nil {
		u.pids, u.havePids = n, true
	}
	return u, nil
}

// readNode reads the whole machine: the root cgroup on v1 (what cAdvisor
// reports for "/"); /proc on v2, whose root cgroup has no memory files.
func (fs cgroupFS) readNode() (usage, error) {
	if !fs.v2 {
		return fs.readV1("/")
	}
	var u usage
	cpu, err := procCPUNanos()
	if err != nil {
		return u, err
	}
	u.cpuNanos = cpu
	mi, err := readKeyed("/proc/meminfo")
	if err != nil {
		return u, err
	}
	total := mi["MemTotal"] * 1024
	free := mi["MemFree"] * 1024
	u.memUsage = sub(total, free)
	u.workingSet = sub(total, mi["MemAvailable"]*1024)
	u.rss = mi["AnonPages"] * 1024
	return u, nil
}

// procCPUNanos is the busy time of all CPUs from /proc/stat (user, nice,
// system, irq, softirq, steal), in nanoseconds.
func procCPUNanos() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var ticks uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseUint(f[i], 10, 64)
		ticks += n
	}
	const userHZ = 100 // USER_HZ on Linux
	return ticks * (1e9 / userHZ), nil
}

// totalMemory is MemTotal in bytes.
func totalMemory() uint64 {
	mi, err := readKeyed("/proc/meminfo")
	if err != nil {
		return 0
	}
	return mi["MemTotal"] * 1024
}

func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// readKeyed parses "key value" lines (memory.stat, cpu.stat) and
// "Key:   value kB" lines (/proc/meminfo).
func readKeyed(path string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		n, err := strconv.ParseUint(fs[1], 10, 64)
		if err != nil {
			continue
		}
		m[strings.TrimSuffix(fs[0], ":")] = n
	}
	return m, sc.Err()
}
