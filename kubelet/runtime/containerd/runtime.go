package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// Labels minik8s puts on every containerd container. The first four are the
// cross-team convention; the rest let a restarted kubelet rebuild the state
// it needs without its own database.
const (
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodName       = "io.kubernetes.pod.name"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelKind is "sandbox" or "container", as in containerd's CRI plugin.
	LabelKind         = "io.cri-containerd.kind"
	LabelRestartCount = "io.kubernetes.container.restartCount"
	LabelHash         = "io.kubernetes.container.hash"
	LabelLogPath      = "io.kubernetes.container.logpath"
	LabelImage        = "io.minik8s.container.image"
	LabelImageID      = "io.minik8s.container.imageID"
	LabelInit         = "io.minik8s.container.init"
	LabelStdin        = "io.minik8s.container.stdin"
	LabelStdinOnce    = "io.minik8s.container.stdinOnce"
	LabelEphemeral    = "io.minik8s.container.ephemeral"
	LabelStartedAt    = "io.minik8s.container.startedAt"
	LabelFinishedAt   = "io.minik8s.container.finishedAt"
	LabelExitCode     = "io.minik8s.container.exitCode"
	LabelReason       = "io.minik8s.container.reason"
	// LabelResources are the cgroup settings the container was created
	// with or last updated to (formatResources).
	LabelResources = "io.minik8s.container.resources"
	// LabelNetNS and LabelHostNetwork describe a sandbox without a pause
	// container.
	LabelNetNS         = "io.minik8s.sandbox.netns"
	LabelHostNetwork   = "io.minik8s.sandbox.hostNetwork"
	defaultStopTimeout = 2 * time.Second
)

// Config configures a Runtime.
type Config struct {
	// Address is containerd's socket, "/run/containerd/containerd.sock".
	Address string
	// Namespace is the containerd namespace holding minik8s's containers.
	Namespace string
	// InsecureRegistries are registry hosts ("127.0.0.1:5000") reached over
	// plain HTTP.
	InsecureRegistries []string
	// RegistryConfigPath is a hosts directory in containerd's layout
	// (HOST/hosts.toml: mirrors, TLS, plain HTTP per registry host;
	// containerd's config_path, usually /etc/containerd/certs.d); empty:
	// every registry is reached directly.
	RegistryConfigPath string
	// SandboxImage and SandboxCommand make the pause container that owns a
	// pod's namespaces.
	SandboxImage   string
	SandboxCommand []string
	// StateDir holds the runtime's FIFOs and the markers of host-network
	// sandboxes; it must not survive a reboot (it is on tmpfs /run).
	StateDir string
	// CgroupParent is the cgroup (v1, cgroupfs) under which pod cgroups go.
	CgroupParent string
	Logger       *slog.Logger
	// OnExit is called (from a runtime goroutine) when a container's task
	// exits and its state has been recorded.
	OnExit func(podUID, containerID string)
}

// Runtime runs pod sandboxes and containers in containerd: the kubelet's
// runtime.Runtime driver with every optional ability.
type Runtime struct {
	cfg    Config
	client *containerd.Client
	log    *slog.Logger

	mu      sync.Mutex
	tasks   map[string]*taskIO // container ID -> client-side IO we hold
	closing bool
	ctx     context.Context
	cancel  context.CancelFunc
}

var (
	_ runtime.Runtime       = (*Runtime)(nil)
	_ runtime.Adopter       = (*Runtime)(nil)
	_ runtime.Execer        = (*Runtime)(nil)
	_ runtime.Attacher      = (*Runtime)(nil)
	_ runtime.CgroupCleaner = (*Runtime)(nil)
)

type taskIO struct {
	io  cio.IO
	log *logFile
	out []*streamWriter
	hub *attachHub // nil for sandboxes
}

// New connects to containerd. It fails if containerd does not answer within
// 10 s; later disconnections are retried by the gRPC client.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.Address == "" {
		cfg.Address = "/run/containerd/containerd.sock"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "minik8s"
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = "/minik8s"
	}
	if cfg.StateDir == "" {
		cfg.StateDir = "/run/minik8s/kubelet"
	}
	if len(cfg.SandboxCommand) == 0 {
		cfg.SandboxCommand = []string{"sleep", "2147483647"}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "fifo"), 0o700); err != nil {
		return nil, err
	}
	c, err := containerd.New(cfg.Address, containerd.WithDefaultNamespace(cfg.Namespace), containerd.WithTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("connect to containerd at %s: %w", cfg.Address, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	rctx = namespaces.WithNamespace(rctx, cfg.Namespace)
	return &Runtime{cfg: cfg, client: c, log: cfg.Logger, tasks: map[string]*taskIO{}, ctx: rctx, cancel: cancel}, nil
}

// SetOnExit sets the exit callback (Config.OnExit) after construction, for
// the pod manager that needs the runtime to exist first.
func (r *Runtime) SetOnExit(f func(podUID, containerID string)) {
	r.mu.Lock()
	r.cfg.OnExit = f
	r.mu.Unlock()
}

// Client is the underlying containerd client (for tests and the image
// helpers).
func (r *Runtime) Client() *containerd.Client { return r.client }

// Namespace is the containerd namespace the runtime works in.
func (r *Runtime) Namespace() string { return r.cfg.Namespace }

func (r *Runtime) nsctx(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, r.cfg.Namespace)
}

// Close lets go of containerd the way a dying process would: it stops
// reading container output and closes the connection, but leaves every
// container and task running for the next kubelet to adopt.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closing = true
	tasks := r.tasks
	r.tasks = map[string]*taskIO{}
	r.mu.Unlock()
	r.cancel()
	for _, t := range tasks {
		// Cancel closes our ends of the FIFOs; Close would also remove
		// them, and the next kubelet re-attaches to them.
		t.io.Cancel()
		if t.log != nil {
			t.log.Close()
		}
	}
	return r.client.Close()
}

// Type implements runtime.Runtime: container IDs are "containerd://ID".
func (r *Runtime) Type() string { return "containerd" }

// Version is the runtime name and version, e.g. ("containerd", "1.6.20").
func (r *Runtime) Version(ctx context.Context) (name, version string, err error) {
	v, err := r.client.Version(r.nsctx(ctx))
	if err != nil {
		return "", "", fmt.Errorf("containerd version: %w", err)
	}
	return r.Type(), v.Version, nil
}

// Status reports whether containerd answers.
func (r *Runtime) Status(ctx context.Context) error {
	ok, err := r.client.IsServing(r.nsctx(ctx))
	if err != nil {
		return fmt.Errorf("containerd not serving: %w", err)
	}
	if !ok {
		return errors.New("containerd not serving")
	}
	return nil
}

func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// ListPodContainers returns the containers labelled with podUID, or every
// minik8s container when podUID is empty, with their current state.
func (r *Runtime) ListPodContainers(ctx context.Context, podUID string) ([]runtime.Container, error) {
	ctx = r.nsctx(ctx)
	var filters []string
	if podUID != "" {
		filters = append(filters, fmt.Sprintf("labels.%q==%s", LabelPodUID, podUID))
	} else {
		filters = append(filters, fmt.Sprintf("labels.%q", LabelPodUID))
	}
	cs, err := r.client.Containers(ctx, filters...)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]runtime.Container, 0, len(cs))
	for _, c := range cs {
		info, err := c.Info(ctx, containerd.WithoutRefreshedMetadata)
		if err != nil {
			if errdefs.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		ct := fromLabels(c.ID(), info.Labels)
		ct.CreatedAt = info.CreatedAt
		if ct.Kind == runtime.KindSandbox && (ct.NetNS != "" || ct.HostNetwork) {
			// A sandbox without a pause container runs while its namespace
			// exists.
			if (ct.HostNetwork && r.hostSandboxMarked(ct.ID)) || (!ct.HostNetwork && netnsExists(ct.NetNS)) {
				ct.State = runtime.StateRunning
			} else {
				ct.State = runtime.StateExited
			}
		} else if ct.State != runtime.StateExited {
			if err := r.taskState(ctx, c, &ct); err != nil {
				return nil, err
			}
		}
		out = append(out, ct)
	}
	return out, nil
}

func fromLabels(id string, l map[string]string) runtime.Container {
	rc, _ := strconv.Atoi(l[LabelRestartCount])
	ct := runtime.Container{
		ID: id, PodUID: l[LabelPodUID], PodNamespace: l[LabelPodNamespace], PodName: l[LabelPodName],
		Name: l[LabelContainerName], Kind: l[LabelKind], Init: l[LabelInit] == "true", Ephemeral: l[LabelEphemeral] == "true", RestartCount: rc,
		Hash: l[LabelHash], Image: l[LabelImage], ImageID: l[LabelImageID], LogPath: l[LabelLogPath],
		StartedAt: parseTime(l[LabelStartedAt]), FinishedAt: parseTime(l[LabelFinishedAt]),
		Reason: l[LabelReason], State: runtime.StateCreated, PodIP: l[LabelPodIP],
		NetNS: l[LabelNetNS], HostNetwork: l[LabelHostNetwork] == "true",
	}
	if r, ok := parseResources(l[LabelResources]); ok {
		ct.Resources = &r
	}
	if s, ok := l[LabelExitCode]; ok {
		code, _ := strconv.Atoi(s)
		ct.ExitCode = int32(code)
		ct.State = runtime.StateExited
	}
	return ct
}

func (r *Runtime) taskState(ctx context.Context, c containerd.Container, ct *runtime.Container) error {
	t, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		if !ct.StartedAt.IsZero() {
			// Started once, but the task is gone with no exit recorded: the
			// node rebooted (or containerd lost its state). Record the exit
			// as CRI runtimes report it, once, so its finish time stays put
			// and restart back-off counts from it.
			ct.State, ct.ExitCode, ct.Reason, ct.FinishedAt = runtime.StateExited, 255, "Unknown", time.Now()
			if _, err := c.SetLabels(ctx, map[string]string{
				LabelExitCode:   "255",
				LabelFinishedAt: ct.FinishedAt.UTC().Format(time.RFC3339Nano),
				LabelReason:     ct.Reason,
			}); err != nil && !errdefs.IsNotFound(err) {
				return fmt.Errorf("record lost task of %s: %w", c.ID(), err)
			}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("task of %s: %w", c.ID(), err)
	}
	st, err := t.Status(ctx)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("task status of %s: %w", c.ID(), err)
	}
	ct.PID = t.Pid()
	switch st.Status {
	case containerd.Running, containerd.Paused, containerd.Pausing:
		ct.State = runtime.StateRunning
	case containerd.Created:
		ct.State = runtime.StateCreated
	case containerd.Stopped:
		ct.State = runtime.StateExited
		ct.ExitCode = int32(st.ExitStatus)
		ct.FinishedAt = st.ExitTime
		ct.Reason = exitReason(r.cfg.CgroupParent, ct.PodUID, ct.ID, ct.ExitCode)
	default:
		ct.State = runtime.StateUnknown
	}
	return nil
}

// exitReason is kube's terminated reason: Completed for 0, OOMKilled when
// the container's memory cgroup recorded an OOM kill, else Error.
func exitReason(parent, podUID, id string, code int32) string {
	if code == 0 {
		return "Completed"
	}
	if code == 137 && oomKilled(parent, podUID, id) {
		return "OOMKilled"
	}
	return "Error"
}

func oomKilled(parent, podUID, id string) bool {
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", CgroupPath(parent, podUID, id), "memory.oom_control"))
	if err != nil {
		return false
	}
	var key string
	var n int64
	for _, line := range splitLines(string(b)) {
		if _, err := fmt.Sscanf(line, "%s %d", &key, &n); err == nil && key == "oom_kill" && n > 0 {
			return true
		}
	}
	return false
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// CgroupPath is the cgroup (relative to each v1 hierarchy root) of
// container id of pod podUID.
func CgroupPath(parent, podUID, id string) string {
	return filepath.Join(parent, "pod"+podUID, id)
}

// PodCgroup is the parent cgroup of a pod's containers.
func (r *Runtime) PodCgroup(podUID string) string {
	return filepath.Join(r.cfg.CgroupParent, "pod"+podUID)
}

// StopContainer sends SIGTERM (or the container's stop signal), waits up to
// grace, then SIGKILLs and waits for the exit to be recorded.
func (r *Runtime) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	ctx = r.nsctx(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if l, err := c.Labels(ctx); err == nil && (l[LabelNetNS] != "" || l[LabelHostNetwork] == "true") {
		// Stopping a sandbox without a pause container releases its
		// namespace or its host-network marker.
		r.unmarkHostSandbox(id)
		return removeNetNS(l[LabelNetNS])
	}
	t, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := t.Status(ctx)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil
		}
		return err
	}
	if st.Status == containerd.Stopped {
		return nil
	}
	wait, err := t.Wait(ctx)
	if err != nil {
		return err
	}
	if grace > 0 {
		if err := t.Kill(ctx, syscall.SIGTERM); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("SIGTERM %s: %w", id, err)
		}
		select {
		case <-wait:
			return nil
		case <-time.After(grace):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := t.Kill(ctx, syscall.SIGKILL, containerd.WithKillAll); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("SIGKILL %s: %w", id, err)
	}
	select {
	case <-wait:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("container %s did not exit after SIGKILL", id)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RemoveContainer deletes a container, its task (killing it) and snapshot.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	ctx = r.nsctx(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if t, err := c.Task(ctx, nil); err == nil {
		if st, err := t.Status(ctx); err == nil && st.Status != containerd.Stopped {
			if err := r.StopContainer(ctx, id, 0); err != nil {
				return err
			}
		}
		if _, err := t.Delete(ctx); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
	}
	r.dropIO(id)
	r.unmarkHostSandbox(id)
	if l, err := c.Labels(ctx); err == nil && l[LabelNetNS] != "" {
		if err := removeNetNS(l[LabelNetNS]); err != nil {
			return err
		}
	}
	if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("delete container %s: %w", id, err)
	}
	return nil
}

// Host-network sandboxes have no namespace or process of their own; a
// marker file on the state directory says they are alive since this boot.
func (r *Runtime) hostSandboxMarker(id string) string {
	return filepath.Join(r.cfg.StateDir, "sandboxes", id)
}

func (r *Runtime) markHostSandbox(id string) error {
	p := r.hostSandboxMarker(id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("host-network sandbox marker: %w", err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return fmt.Errorf("host-network sandbox marker: %w", err)
	}
	return nil
}

func (r *Runtime) hostSandboxMarked(id string) bool {
	_, err := os.Stat(r.hostSandboxMarker(id))
	return err == nil
}

func (r *Runtime) unmarkHostSandbox(id string) { _ = os.Remove(r.hostSandboxMarker(id)) }

func (r *Runtime) dropIO(id string) {
	r.mu.Lock()
	t := r.tasks[id]
	delete(r.tasks, id)
	r.mu.Unlock()
	if t != nil {
		if t.hub != nil {
			t.hub.close()
		}
		t.io.Cancel()
		t.io.Close()
		if t.log != nil {
			t.log.Close()
		}
	}
}

// RemovePodCgroups removes the per-pod cgroup directories and the
// container cgroups left in them (runc leaves those of containers in a
// shared shim), deepest first; directories still holding tasks stay.
func (r *Runtime) RemovePodCgroups(podUID string) { runtime.RemoveCgroup(r.PodCgroup(podUID)) }

// LabelPodIP records the IP CNI gave a sandbox, for restarts.
const LabelPodIP = "io.minik8s.pod.ip"

// SetSandboxIP records the address the pod network gave sandbox id, so a
// restarted kubelet reports the same pod IP.
func (r *Runtime) SetSandboxIP(ctx context.Context, id, ip string) error {
	ctx = r.nsctx(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return err
	}
	_, err = c.SetLabels(ctx, map[string]string{LabelPodIP: ip})
	return err
}
