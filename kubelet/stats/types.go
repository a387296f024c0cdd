package stats

import "time"

// Summary is the statsapi Summary of /stats/summary: the node and the pods
// on it. Only the CPU and memory parts are filled; the other sections of
// Kubernetes' shape (network, fs, rlimit, volumes) are omitted, which the
// API allows (they are optional pointers there too).
type Summary struct {
	Node NodeStats  `json:"node"`
	Pods []PodStats `json:"pods"`
}

// NodeStats is the node's usage.
type NodeStats struct {
	NodeName         string           `json:"nodeName"`
	SystemContainers []ContainerStats `json:"systemContainers,omitempty"`
	StartTime        time.Time        `json:"startTime"`
	CPU              *CPUStats        `json:"cpu,omitempty"`
	Memory           *MemoryStats     `json:"memory,omitempty"`
}

// PodReference names a pod.
type PodReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// PodStats is one pod's usage: its cgroup's, and its containers'.
type PodStats struct {
	PodRef       PodReference     `json:"podRef"`
	StartTime    time.Time        `json:"startTime"`
	Containers   []ContainerStats `json:"containers"`
	CPU          *CPUStats        `json:"cpu,omitempty"`
	Memory       *MemoryStats     `json:"memory,omitempty"`
	ProcessStats *ProcessStats    `json:"process_stats,omitempty"`
}

// ContainerStats is one container's usage.
type ContainerStats struct {
	Name      string       `json:"name"`
	StartTime time.Time    `json:"startTime"`
	CPU       *CPUStats    `json:"cpu,omitempty"`
	Memory    *MemoryStats `json:"memory,omitempty"`
}

// CPUStats: usageNanoCores is the recent rate, usageCoreNanoSeconds the
// cumulative time.
type CPUStats struct {
	Time                 time.Time `json:"time"`
	UsageNanoCores       *uint64   `json:"usageNanoCores,omitempty"`
	UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds,omitempty"`
}

// MemoryStats: workingSetBytes is usage less inactive file pages, what
// the eviction manager and metrics-server use.
type MemoryStats struct {
	Time            time.Time `json:"time"`
	AvailableBytes  *uint64   `json:"availableBytes,omitempty"`
	UsageBytes      *uint64   `json:"usageBytes,omitempty"`
	WorkingSetBytes *uint64   `json:"workingSetBytes,omitempty"`
	RSSBytes        *uint64   `json:"rssBytes,omitempty"`
	PageFaults      *uint64   `json:"pageFaults,omitempty"`
	MajorPageFaults *uint64   `json:"majorPageFaults,omitempty"`
}

// ProcessStats counts a pod's processes.
type ProcessStats struct {
	ProcessCount *uint64 `json:"process_count,omitempty"`
}
