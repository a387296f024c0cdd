package eviction

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/events"
)

// Reason is the reason of an eviction's event and of the evicted pod's
// status, as kube's.
const Reason = "Evicted"

// emptyDirMessageFmt is kube's message for an emptyDir over its limit
// (the trailing space is kube's).
const emptyDirMessageFmt = "Usage of EmptyDir volume %q exceeds the limit %q. "

// immediateGracePeriod is the grace period of local storage evictions
// (kube's immediateEvictionGracePeriodSeconds).
const immediateGracePeriod = time.Second

// systemCriticalPriority is kube's scheduling.SystemCriticalPriority: pods
// at or above it are critical.
const systemCriticalPriority = 2000000000

// Pods is what the eviction manager needs of the kubelet's pod manager.
type Pods interface {
	// ActivePods are the pods on the node that may still run: not
	// finished, not being deleted.
	ActivePods() []*api.Pod
	// EmptyDirPath is the host directory of the pod's emptyDir volume.
	EmptyDirPath(pod *api.Pod, volume string) string
	// EvictPod stops the pod within grace and marks it Failed with reason
	// Evicted and message, for good.
	EvictPod(pod *api.Pod, grace time.Duration, message string) error
}

// Options configure a Manager.
type Options struct {
	// Period is the monitoring period (default 10 s).
	Period time.Duration
	// MaxEntries bounds the entries one volume's walk visits (default
	// 1,000,000); a volume with more is measured by its first MaxEntries.
	MaxEntries int
	Logger     *slog.Logger
}

// Manager is the eviction manager.
type Manager struct {
	pods Pods
	rec  events.Recorder
	opts Options
	log  *slog.Logger
}

// New returns an eviction manager; start it with Run.
func New(pods Pods, rec events.Recorder, opts Options) *Manager {
	if opts.Period <= 0 {
		opts.Period = 10 * time.Second
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 1_000_000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Manager{pods: pods, rec: rec, opts: opts, log: opts.Logger.With("component", "eviction-manager")}
}

// Run synchronizes every period until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	t := time.NewTicker(m.opts.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			m.Synchronize(ctx)
		}
	}
}

// Synchronize is one pass: it returns the pods it evicted.
func (m *Manager) Synchronize(ctx context.Context) []*api.Pod {
	var evicted []*api.Pod
	for _, pod := range m.pods.ActivePods() {
		if ctx.Err() != nil {
			break
		}
		if m.emptyDirLimitEviction(pod) {
			evicted = append(evicted, pod)
		}
	}
	return evicted
}

// emptyDirLimitEviction evicts pod when one of its emptyDir volumes uses
// more than its sizeLimit.
func (m *Manager) emptyDirLimitEviction(pod *api.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() != 1 {
			continue
		}
		limit := *v.EmptyDir.SizeLimit
		used, err := DiskUsage(m.pods.EmptyDirPath(pod, v.Name), limit.Value(), m.opts.MaxEntries)
		if err != nil {
			m.log.Warn("measure emptyDir usage", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name, "err", err)
			continue
		}
		if used > limit.Value() {
			return m.evictPod(pod, fmt.Sprintf(emptyDirMessageFmt, v.Name, limit.String()))
		}
	}
	return false
}

// evictPod is kube's: a critical pod is never evicted; another gets the
// Warning Evicted event, then is stopped.
func (m *Manager) evictPod(pod *api.Pod, message string) bool {
	log := m.log.With("pod", pod.Namespace+"/"+pod.Name)
	if IsCriticalPod(pod) {
		log.Error("cannot evict a critical pod", "message", message)
		return false
	}
	m.rec.Event(pod, api.EventTypeWarning, Reason, message)
	if err := m.pods.EvictPod(pod, immediateGracePeriod, message); err != nil {
		log.Error("pod failed to evict", "err", err)
	} else {
		log.Info("pod is evicted", "message", message)
	}
	return true
}

// IsCriticalPod is kube's kubelettypes.IsCriticalPod: a static or mirror
// pod, or one of priority system-critical or above.
func IsCriticalPod(pod *api.Pod) bool {
	if src, ok := pod.Annotations["kubernetes.io/config.source"]; ok && src != "api" {
		return true
	}
	if _, ok := pod.Annotations[api.MirrorPodAnnotationKey]; ok {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

// DiskUsage is the space the files under root take on disk, as du
// counts it (allocated 512-byte blocks, each hard-linked inode once). It
// stops early once the usage is above stopAbove (>= 0), or after
// maxEntries entries. A missing root uses nothing.
func DiskUsage(root string, stopAbove int64, maxEntries int) (int64, error) {
	var used int64
	seen := map[uint64]bool{}
	entries := 0
	errStop := errors.New("stop")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		entries++
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed during the walk
			}
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if st.Nlink > 1 && !info.IsDir() {
				if seen[st.Ino] {
					return nil
				}
				seen[st.Ino] = true
			}
			used += st.Blocks * 512
		} else {
			used += info.Size()
		}
		if (stopAbove >= 0 && used > stopAbove) || entries >= maxEntries {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return used, err
}
