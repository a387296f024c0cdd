package fake

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/minik8s/minik8s/kubelet/runtime"
)

// Runtime is the in-memory driver. The zero value is not usable: use New.
type Runtime struct {
	mu         sync.Mutex
	containers map[string]*runtime.Container
	seq        int
	actions    []string
	// images present; pulls of others fail with pullErr (nil: succeed).
	images  map[string]bool
	pullErr error
	// execCode is what Exec returns, by container name.
	execCode map[string]int
	onExit   func(podUID, id string)
	// imageUsers are the images' USERs by normalized ref.
	imageUsers map[string]string
	// configs are what CreateContainer was asked, by container ID.
	configs map[string]runtime.ContainerConfig
	// updateErr fails UpdateContainerResources (nil: succeed).
	updateErr error
	// quiet: neither actions nor configs are kept (SetRecording).
	quiet bool
	// ownNetwork: the fake owns the pod network (SetOwnsPodNetwork).
	ownNetwork bool
	// sandboxConfigs are what RunSandbox was asked, in order.
	sandboxConfigs []runtime.SandboxConfig
}

var (
	_ runtime.Runtime         = (*Runtime)(nil)
	_ runtime.Adopter         = (*Runtime)(nil)
	_ runtime.Execer          = (*Runtime)(nil)
	_ runtime.CgroupCleaner   = (*Runtime)(nil)
	_ runtime.ResourceUpdater = (*Runtime)(nil)
)

// New returns an empty runtime: no containers, no images.
func New() *Runtime {
	return &Runtime{containers: map[string]*runtime.Container{}, images: map[string]bool{}, execCode: map[string]int{},
		imageUsers: map[string]string{}, configs: map[string]runtime.ContainerConfig{}}
}

// SetImageUser sets the USER of the image ref ("" until set: root).
func (f *Runtime) SetImageUser(ref, user string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.imageUsers[ref] = user
}

// ImageUser implements runtime.Runtime.
func (f *Runtime) ImageUser(_ context.Context, ref string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.images[ref] {
		return "", fmt.Errorf("image %s not present", ref)
	}
	return f.imageUsers[ref], nil
}

// Config returns the configuration container id was created with.
func (f *Runtime) Config(id string) (runtime.ContainerConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.configs[id]
	return c, ok
}

// AddImage makes the normalized image ref present.
func (f *Runtime) AddImage(ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[ref] = true
}

// FailPulls makes every later pull fail with err (nil: pulls succeed).
func (f *Runtime) FailPulls(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pullErr = err
}

// SetExecCode sets the exit code Exec returns in containers named name
// (0 until set).
func (f *Runtime) SetExecCode(name string, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execCode[name] = code
}

// SetOnExit sets the function called when a container exits (Exit,
// StopContainer), as a real driver calls the pod manager's
// OnContainerExit.
func (f *Runtime) SetOnExit(onExit func(podUID, id string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onExit = onExit
}

// Add puts c in the runtime as it is, as a previous kubelet would have left
// it; it is not recorded as an action.
func (f *Runtime) Add(c runtime.Container) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers[c.ID] = &c
}

// SetRecording turns the record of actions and container configurations
// on (the default) or off: a hollow node that runs for hours keeps
// neither, so its memory follows its pods, not their history.
func (f *Runtime) SetRecording(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quiet = !on
	if f.quiet {
		f.actions, f.configs = nil, map[string]runtime.ContainerConfig{}
	}
}

func (f *Runtime) record(verb string, c *runtime.Container) {
	if f.quiet {
		return
	}
	f.actions = append(f.actions, verb+" "+c.PodName+"/"+c.Name)
}

// Actions returns the calls so far, in order.
func (f *Runtime) Actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.actions)
}

// Type implements runtime.Runtime: container IDs are "fake://ID".
func (f *Runtime) Type() string { return "fake" }

// ListPodContainers implements runtime.Runtime, in the order of the IDs.
func (f *Runtime) ListPodContainers(_ context.Context, podUID string) ([]runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []runtime.Container
	for _, id := range slices.Sorted(maps.Keys(f.containers)) {
		if c := f.containers[id]; podUID == "" || c.PodUID == podUID {
			out = append(out, *c)
		}
	}
	return out, nil
}

// RunSandbox implements runtime.Runtime: the sandbox runs at once.
func (f *Runtime) RunSandbox(_ context.Context, cfg runtime.SandboxConfig) (runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	now := time.Now()
	c := &runtime.Container{ID: fmt.Sprintf("sandbox-%d", f.seq), PodUID: cfg.PodUID, PodNamespace: cfg.PodNamespace, PodName: cfg.PodName,
		Name: runtime.SandboxName, Kind: runtime.KindSandbox, HostNetwork: cfg.HostNetwork, State: runtime.StateRunning,
		CreatedAt: now, StartedAt: now}
	if f.ownNetwork && !cfg.HostNetwork {
		c.PodIP = fmt.Sprintf("10.89.%d.%d", f.seq/250, f.seq%250+1)
	}
	f.sandboxConfigs = append(f.sandboxConfigs, cfg)
	f.containers[c.ID] = c
	f.record("RunSandbox", c)
	return *c, nil
}

// SetSandboxIP implements runtime.Runtime.
func (f *Runtime) SetSandboxIP(_ context.Context, id, ip string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("no sandbox %s", id)
	}
	c.PodIP = ip
	return nil
}

// CreateContainer implements runtime.Runtime.
func (f *Runtime) CreateContainer(_ context.Context, cfg runtime.ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	c := &runtime.Container{ID: fmt.Sprintf("%s-%d", cfg.Name, f.seq), PodUID: cfg.PodUID, PodNamespace: cfg.PodNamespace, PodName: cfg.PodName,
		Name: cfg.Name, Kind: runtime.KindContainer, Init: cfg.Init, RestartCount: cfg.RestartCount, Hash: cfg.Hash, Image: cfg.Image,
		State: runtime.StateCreated, CreatedAt: time.Now()}
	res := cfg.Resources
	c.Resources = &res
	f.containers[c.ID] = c
	if !f.quiet {
		f.configs[c.ID] = cfg
	}
	f.record("CreateContainer", c)
	return c.ID, nil
}

// StartContainer implements runtime.Runtime: the container runs until
// Exit, StopContainer or Reboot.
func (f *Runtime) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("no container %s", id)
	}
	c.State, c.StartedAt = runtime.StateRunning, time.Now()
	f.record("StartContainer", c)
	return nil
}

// StopContainer implements runtime.Runtime: a running container exits at
// once with 137 (Error), whatever the grace period, which is recorded.
func (f *Runtime) StopContainer(_ context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		f.mu.Unlock()
		return nil
	}
	if !f.quiet {
		f.actions = append(f.actions, fmt.Sprintf("StopContainer %s/%s grace=%s", c.PodName, c.Name, grace))
	}
	f.mu.Unlock()
	f.Exit(id, 137, "Error")
	return nil
}

// RemoveContainer implements runtime.Runtime.
func (f *Runtime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok {
		f.record("RemoveContainer", c)
		delete(f.containers, id)
	}
	return nil
}

// ImagePresent implements runtime.Runtime; the image ID is "sha256:"+ref.
func (f *Runtime) ImagePresent(_ context.Context, ref string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "sha256:" + ref, f.images[ref], nil
}

// PullImage implements runtime.Runtime: the image (1 MiB) is present
// afterwards, unless FailPulls set an error.
func (f *Runtime) PullImage(_ context.Context, ref string) (string, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.quiet {
		f.actions = append(f.actions, "PullImage "+ref)
	}
	if f.pullErr != nil {
		return "", 0, f.pullErr
	}
	f.images[ref] = true
	return "sha256:" + ref, 1 << 20, nil
}

// Adopt implements runtime.Adopter.
func (f *Runtime) Adopt(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.containers[id]; ok {
		f.record("Adopt", c)
	}
	return nil
}

// Exec implements runtime.Execer: nothing runs; the exit code is the one
// SetExecCode gave the container's name.
func (f *Runtime) Exec(_ context.Context, id string, cmd []string, _ bool, _ io.Reader, _, _ io.Writer, _ <-chan runtime.TerminalSize) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		return -1, fmt.Errorf("container %s is not running", id)
	}
	return f.execCode[c.Name], nil
}

// UpdateContainerResources implements runtime.ResourceUpdater: the set
// values replace the running container's, recorded as
// "UpdateContainerResources POD/NAME shares=S quota=Q period=P memory=M"
// with the values asked.
func (f *Runtime) UpdateContainerResources(_ context.Context, id string, r runtime.Resources) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		return fmt.Errorf("container %s is not running", id)
	}
	if !f.quiet {
		f.actions = append(f.actions, fmt.Sprintf("UpdateContainerResources %s/%s shares=%d quota=%d period=%d memory=%d",
			c.PodName, c.Name, r.CPUShares, r.CPUQuota, r.CPUPeriod, r.MemoryLimit))
	}
	if f.updateErr != nil {
		return f.updateErr
	}
	cur := runtime.Resources{}
	if c.Resources != nil {
		cur = *c.Resources
	}
	if r.CPUShares > 0 {
		cur.CPUShares = r.CPUShares
	}
	if r.CPUQuota > 0 {
		cur.CPUQuota, cur.CPUPeriod = r.CPUQuota, r.CPUPeriod
	}
	if r.MemoryLimit > 0 {
		cur.MemoryLimit = r.MemoryLimit
	}
	c.Resources = &cur
	return nil
}

// FailUpdates makes every later UpdateContainerResources fail with err
// (nil: updates succeed).
func (f *Runtime) FailUpdates(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updateErr = err
}

// RemovePodCgroups implements runtime.CgroupCleaner: there are none.
func (f *Runtime) RemovePodCgroups(string) {}

// Exit makes a running container exit with code and reason, as its task
// would, and calls the exit function.
func (f *Runtime) Exit(id string, code int32, reason string) {
	f.mu.Lock()
	c, ok := f.containers[id]
	if !ok || c.State != runtime.StateRunning {
		f.mu.Unlock()
		return
	}
	c.State, c.ExitCode, c.Reason, c.FinishedAt = runtime.StateExited, code, reason, time.Now()
	uid, onExit := c.PodUID, f.onExit
	f.mu.Unlock()
	if onExit != nil {
		onExit(uid, id)
	}
}

// Running returns the running instance of container name of pod podName,
// or nil.
func (f *Runtime) Running(podName, name string) *runtime.Container {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.containers {
		if c.PodName == podName && c.Name == name && c.State == runtime.StateRunning {
			cp := *c
			return &cp
		}
	}
	return nil
}

// Reboot loses every task, as a node restart does: sandboxes are no
// longer running, and started containers report the lost task as CRI
// runtimes do (exited, 255, Unknown).
func (f *Runtime) Reboot() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.containers {
		if c.State != runtime.StateRunning {
			continue
		}
		c.State = runtime.StateExited
		if c.Kind == runtime.KindContainer {
			c.ExitCode, c.Reason, c.FinishedAt = 255, "Unknown", time.Now()
		}
	}
}

// SetOwnsPodNetwork makes the fake a runtime.NetworkOwner: RunSandbox
// gives each sandbox of a pod network an address of 10.89.0.0/16 itself.
func (f *Runtime) SetOwnsPodNetwork(own bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ownNetwork = own
}

// OwnsPodNetwork implements runtime.NetworkOwner.
func (f *Runtime) OwnsPodNetwork() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ownNetwork
}

// SandboxConfigs are the configs RunSandbox was called with, in order.
func (f *Runtime) SandboxConfigs() []runtime.SandboxConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runtime.SandboxConfig(nil), f.sandboxConfigs...)
}
