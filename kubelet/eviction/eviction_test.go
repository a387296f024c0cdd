package eviction

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/events"
)

// fakePods serves pods whose emptyDirs live under dir/UID/VOLUME and
// records evictions.
type fakePods struct {
	dir     string
	pods    []*api.Pod
	mu      sync.Mutex
	evicted []string
}

func (f *fakePods) ActivePods() []*api.Pod { return f.pods }

func (f *fakePods) EmptyDirPath(pod *api.Pod, volume string) string {
	return filepath.Join(f.dir, string(pod.UID), volume)
}

func (f *fakePods) EvictPod(pod *api.Pod, grace time.Duration, message string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evicted = append(f.evicted, pod.Name+" "+grace.String()+" "+message)
	return nil
}

func emptyDirPod(name, limit string, medium api.StorageMedium) *api.Pod {
	src := &api.EmptyDirVolumeSource{Medium: medium}
	if limit != "" {
		q := resource.MustParse(limit)
		src.SizeLimit = &q
	}
	return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: api.UID("uid-" + name)},
		Spec: api.PodSpec{Volumes: []api.Volume{{Name: "cache"}, {Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: src}}}}}
}

func writeFile(t *testing.T, p string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A pod whose emptyDir holds more than its sizeLimit is evicted with
// kube's event and message and a 1 s grace period; one under its limit,
// one without a limit and a critical one over its limit are not.
func TestEmptyDirLimitEviction(t *testing.T) {
	t.Parallel()
	f := &fakePods{dir: t.TempDir()}
	over := emptyDirPod("over", "1Mi", "")
	under := emptyDirPod("under", "4Mi", "")
	unlimited := emptyDirPod("unlimited", "", "")
	memory := emptyDirPod("memory", "1Mi", api.StorageMediumMemory)
	critical := emptyDirPod("critical", "1Mi", "")
	prio := int32(systemCriticalPriority)
	critical.Spec.Priority = &prio
	mirror := emptyDirPod("mirror", "1Mi", "")
	mirror.Annotations = map[string]string{api.MirrorPodAnnotationKey: "x"}
	f.pods = []*api.Pod{over, under, unlimited, memory, critical, mirror}
	for _, p := range f.pods {
		writeFile(t, filepath.Join(f.EmptyDirPath(p, "scratch"), "sub", "data"), 2<<20)
	}
	rec := &events.FakeRecorder{}
	m := New(f, rec, Options{})
	got := m.Synchronize(context.Background())
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"over", "memory"}) {
		t.Errorf("evicted %q, want over and memory", names)
	}
	msg := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	if want := []string{"over 1s " + msg, "memory 1s " + msg}; !slices.Equal(f.evicted, want) {
		t.Errorf("evictions %q, want %q", f.evicted, want)
	}
	if want := []string{"Warning Evicted " + msg, "Warning Evicted " + msg}; !slices.Equal(rec.Events(), want) {
		t.Errorf("events %q, want %q", rec.Events(), want)
	}
}

// DiskUsage counts allocated blocks, a hard-linked file once, nothing
// for a missing directory, and stops early past its bound.
func TestDiskUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "one"), 1<<20)
	if err := os.Link(filepath.Join(dir, "a", "one"), filepath.Join(dir, "a", "two")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "b"), 1<<20)
	used, err := DiskUsage(dir, -1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if used < 2<<20 || used > 2<<20+64<<10 {
		t.Errorf("usage %d, want about 2 MiB (a hard link counted once)", used)
	}
	if used, err := DiskUsage(filepath.Join(dir, "missing"), -1, 1000); err != nil || used != 0 {
		t.Errorf("missing directory: %d, %v", used, err)
	}
	if used, err := DiskUsage(dir, 1, 1000); err != nil || used >= 2<<20 {
		t.Errorf("stopped above 1 byte: %d, %v, want less than the whole", used, err)
	}
	if used, err := DiskUsage(dir, -1, 2); err != nil || used >= 1<<20 {
		t.Errorf("bounded to 2 entries: %d, %v", used, err)
	}
}
