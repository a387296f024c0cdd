package stats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Container is a running container as the runtime knows it.
type Container struct {
	ID           string
	PodUID       string
	PodNamespace string
	PodName      string
	// Name is the container's name in the pod spec; empty for the sandbox.
	Name      string
	Sandbox   bool
	StartedAt time.Time
}

// ContainerLister lists the running containers (and pod sandboxes) of the
// node; the kubelet's runtime adapter implements it.
type ContainerLister interface {
	RunningContainers(ctx context.Context) ([]Container, error)
}

// Config assembles a Provider.
type Config struct {
	NodeName string
	// CgroupParent is the cgroup the pods' cgroups are under ("/minik8s").
	CgroupParent string
	// CgroupRoot is where the hierarchies are mounted (default /sys/fs/cgroup).
	CgroupRoot string
	Containers ContainerLister
	Logger     *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Provider measures the node, pods and containers.
type Provider struct {
	cfg  Config
	fs   cgroupFS
	boot time.Time

	mu   sync.Mutex
	last map[string]cpuSample // by cgroup path: the reading rates are taken against
	rate map[string]uint64    // the last rate computed, reused within a second
}

type cpuSample struct {
	at    time.Time
	nanos uint64
}

// New returns a Provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Containers == nil {
		return nil, errors.New("stats: a container lister is required")
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/sys/fs/cgroup"
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = "/minik8s"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Provider{cfg: cfg, fs: newCgroupFS(cfg.CgroupRoot), boot: bootTime(),
		last: map[string]cpuSample{}, rate: map[string]uint64{}}, nil
}

// Summary measures everything now. A container whose cgroup cannot be
// read (it just exited) is left out, as cAdvisor leaves out containers it
// no longer sees.
func (p *Provider) Summary(ctx context.Context) (*Summary, error) {
	cs, err := p.cfg.Containers.RunningContainers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	node, err := p.fs.readNode()
	if err != nil {
		return nil, fmt.Errorf("node cgroup: %w", err)
	}
	now := p.cfg.Now()
	s := &Summary{Node: NodeStats{NodeName: p.cfg.NodeName, StartTime: p.boot.UTC(),
		CPU: p.cpu("/", node, now), Memory: memory(node, now, totalMemory())}, Pods: []PodStats{}}

	pods := map[string]*PodStats{}
	var order []string
	podFor := func(c Container) *PodStats {
		ps, ok := pods[c.PodUID]
		if !ok {
			ps = &PodStats{PodRef: PodReference{Name: c.PodName, Namespace: c.PodNamespace, UID: c.PodUID}, Containers: []ContainerStats{}}
			pods[c.PodUID] = ps
			order = append(order, c.PodUID)
		}
		return ps
	}
	for _, c := range cs {
		ps := podFor(c)
		if c.Sandbox {
			ps.StartTime = c.StartedAt.UTC()
			continue
		}
		cg := path.Join(p.cfg.CgroupParent, "pod"+c.PodUID, c.ID)
		u, err := p.fs.read(cg)
		if err != nil {
			p.cfg.Logger.Debug("reading container cgroup", "pod", c.PodNamespace+"/"+c.PodName, "container", c.Name, "err", err)
			continue
		}
		ps.Containers = append(ps.Containers, ContainerStats{Name: c.Name, StartTime: c.StartedAt.UTC(),
			CPU: p.cpu(cg, u, now), Memory: memory(u, now, 0)})
	}
	for _, uid := range order {
		ps := pods[uid]
		cg := path.Join(p.cfg.CgroupParent, "pod"+uid)
		if u, err := p.fs.read(cg); err == nil {
			ps.CPU, ps.Memory = p.cpu(cg, u, now), memory(u, now, 0)
			if u.havePids {
				n := u.pids
				ps.ProcessStats = &ProcessStats{ProcessCount: &n}
			}
		}
		if ps.StartTime.IsZero() {
			for _, c := range ps.Containers {
				if ps.StartTime.IsZero() || c.StartTime.Before(ps.StartTime) {
					ps.StartTime = c.StartTime
				}
			}
		}
		slices.SortFunc(ps.Containers, func(a, b ContainerStats) int { return strings.Compare(a.Name, b.Name) })
		s.Pods = append(s.Pods, *ps)
	}
	slices.SortFunc(s.Pods, func(a, b PodStats) int {
		return strings.Compare(a.PodRef.Namespace+"/"+a.PodRef.Name, b.PodRef.Namespace+"/"+b.PodRef.Name)
	})
	p.forget(cs)
	return s, nil
}

// cpu is the CPU stats of a reading; the rate is against the previous
// reading of the cgroup at least a second old (a fresher one would make a
// noisy rate), and absent on the first reading.
func (p *Provider) cpu(cgroup string, u usage, now time.Time) *CPUStats {
	total := u.cpuNanos
	st := &CPUStats{Time: now.UTC(), UsageCoreNanoSeconds: &total}
	p.mu.Lock()
	defer p.mu.Unlock()
	prev, ok := p.last[cgroup]
	switch {
	case !ok || total < prev.nanos:
		p.last[cgroup] = cpuSample{at: now, nanos: total}
		delete(p.rate, cgroup)
	case now.Sub(prev.at) >= time.Second:
		r := uint64(float64(total-prev.nanos) / now.Sub(prev.at).Seconds())
		p.rate[cgroup] = r
		p.last[cgroup] = cpuSample{at: now, nanos: total}
	}
	if r, ok := p.rate[cgroup]; ok {
		st.UsageNanoCores = &r
	}
	return st
}

// forget drops the samples of cgroups no longer running.
func (p *Provider) forget(cs []Container) {
	live := map[string]bool{"/": true}
	for _, c := range cs {
		pod := path.Join(p.cfg.CgroupParent, "pod"+c.PodUID)
		live[pod] = true
		live[path.Join(pod, c.ID)] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.last {
		if !live[k] {
			delete(p.last, k)
			delete(p.rate, k)
		}
	}
}

func memory(u usage, now time.Time, capacity uint64) *MemoryStats {
	m := &MemoryStats{Time: now.UTC(), UsageBytes: ptr(u.memUsage), WorkingSetBytes: ptr(u.workingSet),
		RSSBytes: ptr(u.rss), PageFaults: ptr(u.pageFaults), MajorPageFaults: ptr(u.majorFaults)}
	limit := u.memLimit
	if capacity > 0 && (limit == 0 || capacity < limit) {
		limit = capacity
	}
	if limit > 0 {
		m.AvailableBytes = ptr(sub(limit, u.workingSet))
	}
	return m
}

func ptr(v uint64) *uint64 { return &v }

// bootTime is the machine's boot time (btime of /proc/stat).
func bootTime() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(n, 0)
		}
	}
	return time.Time{}
}
