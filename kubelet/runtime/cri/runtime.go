package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/kubelet/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Labels and annotations, kube's names (kuberuntime's labels.go) where it
// has them.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelOwner, when Config.Owner is set, marks the sandboxes and
	// containers of one kubelet, so kubelets (tests) sharing a runtime
	// leave each other's pods alone.
	LabelOwner = "io.minik8s.owner"

	AnnotationHash         = "io.kubernetes.container.hash"
	AnnotationRestartCount = "io.kubernetes.container.restartCount"
	AnnotationImage        = "io.minik8s.container.image"
	AnnotationInit         = "io.minik8s.container.init"
	AnnotationEphemeral    = "io.minik8s.container.ephemeral"
)

// DefaultEndpoint is containerd's socket, where its CRI plugin answers.
const DefaultEndpoint = "unix:///run/containerd/containerd.sock"

// Config configures a Runtime.
type Config struct {
	// Endpoint is the runtime's socket, unix:///PATH (or a bare PATH);
	// ImageEndpoint the image service's (empty: Endpoint).
	Endpoint, ImageEndpoint string
	// PodLogsDir is the directory of the pods' log directories
	// (/var/log/pods): the pod manager's LogsDir.
	PodLogsDir string
	// CgroupParent is the cgroup (cgroupfs) under which a pod's cgroup
	// pod<UID> goes, the sandbox's cgroup_parent being PARENT/pod<UID>.
	CgroupParent string
	// Owner, when set, is put on every sandbox and container as
	// LabelOwner, and only those carrying it are listed.
	Owner string
	// ImageMounter, when set, mounts the pods' image volumes: CRI v1 as
	// containerd 1.6 serves it has no image mounts (containerd 2.1 mounts
	// a container's Mount.image itself), so on containerd the kubelet
	// mounts the image through containerd's own API in the CRI plugin's
	// namespace and gives it to the container as a bind mount. Without one
	// a pod with an image volume fails with runtime.ErrNoImageMounts.
	ImageMounter runtime.ImageMounter
	// RelistPeriod is how often the runtime's containers are listed to
	// report exits to OnExit (default 1 s, as kube's PLEG).
	RelistPeriod time.Duration
	// Timeout bounds every call but exec, attach and image pulls (default
	// 2 min, kube's --runtime-request-timeout).
	Timeout time.Duration
	Logger  *slog.Logger
	// OnExit is called (from the relist goroutine) when a container or
	// sandbox stops running.
	OnExit func(podUID, containerID string)
}

// Runtime runs pods through a CRI runtime: runtime.Runtime with Execer,
// Attacher, ResourceUpdater, CgroupCleaner and NetworkOwner.
type Runtime struct {
	cfg     Config
	conn    *grpc.ClientConn
	imgConn *grpc.ClientConn
	rs      criapi.RuntimeServiceClient
	is      criapi.ImageServiceClient
	log     *slog.Logger

	mu        sync.Mutex
	name      string          // RuntimeName from Version, once known
	sandboxes map[string]bool // IDs known to be sandboxes (true) or containers (false)
	// statuses are the statuses last read of the sandboxes and
	// containers by ID, with the listed state they were read in: what a
	// status says does not change while the state does not (an update of
	// the resources drops the entry), so a list asks the runtime only for
	// the new ones and those whose state changed.
	statuses map[string]cachedStatus
	// statusGen counts dropStatus and forget calls: a status read
	// before one of them may be stale and is not cached (a list that read
	// the old resources while an update dropped the entry would cache
	// them again for the container's whole life).
	statusGen uint64
	onExit    func(podUID, containerID string)
	cancel    context.CancelFunc
	done      chan struct{}
}

var (
	_ runtime.Runtime         = (*Runtime)(nil)
	_ runtime.Execer          = (*Runtime)(nil)
	_ runtime.Attacher        = (*Runtime)(nil)
	_ runtime.ResourceUpdater = (*Runtime)(nil)
	_ runtime.CgroupCleaner   = (*Runtime)(nil)
	_ runtime.NetworkOwner    = (*Runtime)(nil)
)

// grpcTarget turns a kube endpoint (unix:///PATH or PATH) into a gRPC
// target.
func grpcTarget(endpoint string) (string, error) {
	switch {
	case strings.HasPrefix(endpoint, "unix://"):
		return endpoint, nil
	case strings.HasPrefix(endpoint, "/"):
		return "unix://" + endpoint, nil
	case strings.Contains(endpoint, "://"):
		return "", fmt.Errorf("container runtime endpoint %q: only unix:// sockets are supported", endpoint)
	default:
		return "", fmt.Errorf("container runtime endpoint %q is neither unix:///PATH nor an absolute path", endpoint)
	}
}

func dial(endpoint string) (*grpc.ClientConn, error) {
	target, err := grpcTarget(endpoint)
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
}

// New makes the runtime's client. It does not wait for the runtime: a
// runtime that does not answer fails the calls (and Status) until it does,
// so the node reports it down instead of the kubelet exiting.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	if cfg.ImageEndpoint == "" {
		cfg.ImageEndpoint = cfg.Endpoint
	}
	if cfg.PodLogsDir == "" {
		cfg.PodLogsDir = "/var/log/pods"
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = "/minik8s"
	}
	if cfg.RelistPeriod <= 0 {
		cfg.RelistPeriod = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	conn, err := dial(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	imgConn := conn
	if cfg.ImageEndpoint != cfg.Endpoint {
		if imgConn, err = dial(cfg.ImageEndpoint); err != nil {
			conn.Close()
			return nil, err
		}
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{cfg: cfg, conn: conn, imgConn: imgConn, rs: criapi.NewRuntimeServiceClient(conn), is: criapi.NewImageServiceClient(imgConn),
		log: cfg.Logger, sandboxes: map[string]bool{}, statuses: map[string]cachedStatus{}, onExit: cfg.OnExit, cancel: cancel, done: make(chan struct{})}
	vctx, vcancel := context.WithTimeout(ctx, 5*time.Second)
	defer vcancel()
	if name, v, err := r.Version(vctx); err != nil {
		r.log.Warn("container runtime does not answer yet", "endpoint", cfg.Endpoint, "err", err)
	} else {
		r.log.Info("container runtime", "endpoint", cfg.Endpoint, "name", name, "version", v)
	}
	go r.relist(rctx)
	return r, nil
}

// SetOnExit sets the exit callback after construction.
func (r *Runtime) SetOnExit(f func(podUID, containerID string)) {
	r.mu.Lock()
	r.onExit = f
	r.mu.Unlock()
}

// MountImage mounts image volume ref at target through
// Config.ImageMounter.
func (r *Runtime) MountImage(ctx context.Context, ref, target string) error {
	if r.cfg.ImageMounter == nil {
		return runtime.ErrNoImageMounts
	}
	return r.cfg.ImageMounter.MountImage(ctx, ref, target)
}

// UnmountImage undoes MountImage (nothing without an ImageMounter).
func (r *Runtime) UnmountImage(ctx context.Context, target string) error {
	if r.cfg.ImageMounter == nil {
		return nil
	}
	return r.cfg.ImageMounter.UnmountImage(ctx, target)
}

// Close stops the relist loop and closes the connections; the runtime
// keeps every sandbox and container.
func (r *Runtime) Close() error {
	r.cancel()
	<-r.done
	if r.imgConn != r.conn {
		r.imgConn.Close()
	}
	return r.conn.Close()
}

func (r *Runtime) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.cfg.Timeout)
}

// Type is the runtime's name as its Version call reports it
// ("containerd", "cri-o"): the scheme of the container IDs. Before the
// runtime has answered once it asks again (briefly); "cri" if it still
// does not answer.
func (r *Runtime) Type() string {
	r.mu.Lock()
	name := r.name
	r.mu.Unlock()
	if name != "" {
		return name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if n, _, err := r.Version(ctx); err == nil {
		return n
	}
	return "cri"
}

// Version is the runtime's name and version, ("containerd", "1.6.20").
func (r *Runtime) Version(ctx context.Context) (name, version string, err error) {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	v, err := r.rs.Version(ctx, &criapi.VersionRequest{Version: "v1"})
	if err != nil {
		return "", "", fmt.Errorf("runtime version: %w", err)
	}
	r.mu.Lock()
	r.name = v.RuntimeName
	r.mu.Unlock()
	return v.RuntimeName, v.RuntimeVersion, nil
}

func (r *Runtime) conditions(ctx context.Context) (map[string]*criapi.RuntimeCondition, error) {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.rs.Status(ctx, &criapi.StatusRequest{})
	if err != nil {
		return nil, err
	}
	out := map[string]*criapi.RuntimeCondition{}
	for _, c := range resp.GetStatus().GetConditions() {
		out[c.Type] = c
	}
	return out, nil
}

// Status is nil when the runtime answers and reports RuntimeReady.
func (r *Runtime) Status(ctx context.Context) error {
	conds, err := r.conditions(ctx)
	if err != nil {
		return fmt.Errorf("runtime status: %w", err)
	}
	if c := conds[criapi.RuntimeReady]; c == nil || !c.Status {
		return fmt.Errorf("RuntimeReady=false reason:%s message:%s", c.GetReason(), c.GetMessage())
	}
	return nil
}

// NetworkStatus is nil when the runtime reports NetworkReady (its CNI
// configuration loaded); otherwise the condition's reason and message.
func (r *Runtime) NetworkStatus(ctx context.Context) error {
	conds, err := r.conditions(ctx)
	if err != nil {
		return fmt.Errorf("runtime status: %w", err)
	}
	if c := conds[criapi.NetworkReady]; c == nil || !c.Status {
		return fmt.Errorf("reason:%s message:%s", c.GetReason(), c.GetMessage())
	}
	return nil
}

// OwnsPodNetwork implements runtime.NetworkOwner: the CRI runtime runs CNI.
func (r *Runtime) OwnsPodNetwork() bool { return true }

// SetSandboxIP does nothing: the runtime reports the IP it gave.
func (r *Runtime) SetSandboxIP(context.Context, string, string) error { return nil }

// PodLogDir is kube's log directory of a pod: PODLOGS/NS_NAME_UID.
func (r *Runtime) PodLogDir(ns, name, uid string) string {
	return filepath.Join(r.cfg.PodLogsDir, fmt.Sprintf("%s_%s_%s", ns, name, uid))
}

// PodCgroup is the sandbox's cgroup_parent: PARENT/pod<UID>; the runtime
// puts each container in PARENT/pod<UID>/<ID>.
func (r *Runtime) PodCgroup(podUID string) string {
	return filepath.Join(r.cfg.CgroupParent, "pod"+podUID)
}

func (r *Runtime) selector(podUID string) map[string]string {
	sel := map[string]string{}
	if podUID != "" {
		sel[LabelPodUID] = podUID
	}
	if r.cfg.Owner != "" {
		sel[LabelOwner] = r.cfg.Owner
	}
	return sel
}

// podLabels are a sandbox's or container's labels: podLabels (the pod's,
// on a sandbox) with kube's io.kubernetes.pod.* labels and the owner's
// over them.
func (r *Runtime) podLabels(uid, ns, name string, podLabels map[string]string) map[string]string {
	l := make(map[string]string, len(podLabels)+4)
	maps.Copy(l, podLabels)
	l[LabelPodName], l[LabelPodNamespace], l[LabelPodUID] = name, ns, uid
	if r.cfg.Owner != "" {
		l[LabelOwner] = r.cfg.Owner
	}
	return l
}

func (r *Runtime) remember(id string, sandbox bool) {
	r.mu.Lock()
	r.sandboxes[id] = sandbox
	r.mu.Unlock()
}

func (r *Runtime) forget(id string) {
	r.mu.Lock()
	delete(r.sandboxes, id)
	delete(r.statuses, id)
	r.statusGen++
	r.mu.Unlock()
}

// cachedStatus is a status read in the listed state state (a
// PodSandboxState or ContainerState).
type cachedStatus struct {
	state int32
	ct    runtime.Container
}

// cachedStatus returns the cached status of id in the listed state, or
// the generation to hand cacheStatus with the status read instead.
func (r *Runtime) cachedStatus(id string, state int32) (runtime.Container, uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.statuses[id]
	return c.ct, r.statusGen, ok && c.state == state
}

// cacheStatus caches a status read at generation gen, unless an entry
// was dropped since.
func (r *Runtime) cacheStatus(id string, state int32, ct runtime.Container, gen uint64) {
	r.mu.Lock()
	if r.statusGen == gen {
		r.statuses[id] = cachedStatus{state, ct}
	}
	r.mu.Unlock()
}

func (r *Runtime) dropStatus(id string) {
	r.mu.Lock()
	delete(r.statuses, id)
	r.statusGen++
	r.mu.Unlock()
}

// isSandbox tells a sandbox ID from a container ID: from memory, else by
// asking for the sandbox.
func (r *Runtime) isSandbox(ctx context.Context, id string) (bool, error) {
	r.mu.Lock()
	sb, ok := r.sandboxes[id]
	r.mu.Unlock()
	if ok {
		return sb, nil
	}
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	_, err := r.rs.PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: id})
	switch {
	case err == nil:
		r.remember(id, true)
		return true, nil
	case isNotFound(err):
		return false, nil
	default:
		return false, err
	}
}

// isNotFound is a runtime's answer for an ID it does not have: gRPC's
// NotFound code, as kube's kubelet tells it (crierrors.IsNotFound), also
// through the driver's wrapping.
func isNotFound(err error) bool {
	return status.Code(err) == codes.NotFound
}

// sandboxConfig is what a sandbox of the pod is created with, and what
// CreateContainer hands the runtime again.
func (r *Runtime) sandboxConfig(uid, ns, name string, attempt uint32, hostNetwork bool, labels, annotations map[string]string) *criapi.PodSandboxConfig {
	netMode := criapi.NamespaceMode_POD
	if hostNetwork {
		netMode = criapi.NamespaceMode_NODE
	}
	return &criapi.PodSandboxConfig{
		Metadata:     &criapi.PodSandboxMetadata{Name: name, Namespace: ns, Uid: uid, Attempt: attempt},
		LogDirectory: r.PodLogDir(ns, name, uid),
		Labels:       r.podLabels(uid, ns, name, labels),
		Annotations:  maps.Clone(annotations),
		Linux: &criapi.LinuxPodSandboxConfig{
			CgroupParent: r.PodCgroup(uid),
			SecurityContext: &criapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &criapi.NamespaceOption{Network: netMode, Pid: criapi.NamespaceMode_CONTAINER, Ipc: criapi.NamespaceMode_POD},
				// kube runs every sandbox with the runtime's default seccomp
				// profile.
				Seccomp: &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_RuntimeDefault},
			},
		},
	}
}

func toProtocol(p string) criapi.Protocol {
	switch strings.ToUpper(p) {
	case "UDP":
		return criapi.Protocol_UDP
	case "SCTP":
		return criapi.Protocol_SCTP
	}
	return criapi.Protocol_TCP
}

// RunSandbox runs a pod sandbox (RunPodSandbox): the runtime's pause
// container and, without hostNetwork, its network attachment.
func (r *Runtime) RunSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Container, error) {
	attempt, err := r.nextAttempt(ctx, cfg.PodUID)
	if err != nil {
		return runtime.Container{}, err
	}
	sc := r.sandboxConfig(cfg.PodUID, cfg.PodNamespace, cfg.PodName, attempt, cfg.HostNetwork, cfg.Labels, cfg.Annotations)
	if !cfg.HostNetwork {
		sc.Hostname = cfg.Hostname
	}
	sc.Linux.Sysctls = cfg.Sysctls
	sc.Linux.SecurityContext.Privileged = cfg.Privileged
	for _, p := range cfg.PortMappings {
		sc.PortMappings = append(sc.PortMappings, &criapi.PortMapping{Protocol: toProtocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP})
	}
	if err := os.MkdirAll(sc.LogDirectory, 0o755); err != nil {
		return runtime.Container{}, fmt.Errorf("pod log directory: %w", err)
	}
	rctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.rs.RunPodSandbox(rctx, &criapi.RunPodSandboxRequest{Config: sc})
	if err != nil {
		return runtime.Container{}, fmt.Errorf("RunPodSandbox: %w", err)
	}
	r.remember(resp.PodSandboxId, true)
	ct, err := r.sandboxStatus(ctx, resp.PodSandboxId, true)
	if err != nil {
		return runtime.Container{}, err
	}
	return ct, nil
}

// nextAttempt is one more than the highest attempt of the pod's sandboxes
// (the runtime refuses a second sandbox of the same name and attempt).
func (r *Runtime) nextAttempt(ctx context.Context, uid string) (uint32, error) {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.rs.ListPodSandbox(ctx, &criapi.ListPodSandboxRequest{Filter: &criapi.PodSandboxFilter{LabelSelector: r.selector(uid)}})
	if err != nil {
		return 0, fmt.Errorf("ListPodSandbox: %w", err)
	}
	var next uint32
	for _, s := range resp.Items {
		if a := s.GetMetadata().GetAttempt() + 1; a > next {
			next = a
		}
	}
	return next, nil
}

// verboseInfo is the part of a runtime's verbose status info the driver
// reads: containerd's and CRI-O's "info" JSON carry the process ID.
type verboseInfo struct {
	Pid       uint32 `json:"pid"`
	ImageSpec struct {
		Config struct {
			User string `json:"User"`
		} `json:"config"`
	} `json:"imageSpec"`
}

func parseInfo(info map[string]string) verboseInfo {
	var v verboseInfo
	if s, ok := info["info"]; ok {
		_ = json.Unmarshal([]byte(s), &v)
	}
	return v
}

func nsTime(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func (r *Runtime) sandboxStatus(ctx context.Context, id string, verbose bool) (runtime.Container, error) {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.rs.PodSandboxStatus(ctx, &criapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: verbose})
	if err != nil {
		return runtime.Container{}, fmt.Errorf("PodSandboxStatus %s: %w", id, err)
	}
	s := resp.Status
	md := s.GetMetadata()
	ct := runtime.Container{
		ID: s.Id, PodUID: md.GetUid(), PodNamespace: md.GetNamespace(), PodName: md.GetName(),
		Name: runtime.SandboxName, Kind: runtime.KindSandbox, PodIP: s.GetNetwork().GetIp(),
		HostNetwork: s.GetLinux().GetNamespaces().GetOptions().GetNetwork() == criapi.NamespaceMode_NODE,
		CreatedAt:   nsTime(s.CreatedAt), StartedAt: nsTime(s.CreatedAt), State: runtime.StateExited,
	}
	if s.State == criapi.PodSandboxState_SANDBOX_READY {
		ct.State = runtime.StateRunning
		ct.PID = parseInfo(resp.Info).Pid
	}
	return ct, nil
}

func (r *Runtime) containerStatus(ctx context.Context, id string, verbose bool) (runtime.Container, error) {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.rs.ContainerStatus(ctx, &criapi.ContainerStatusRequest{ContainerId: id, Verbose: verbose})
	if err != nil {
		return runtime.Container{}, fmt.Errorf("ContainerStatus %s: %w", id, err)
	}
	s := resp.Status
	l, a := s.Labels, s.Annotations
	rc, err := strconv.Atoi(a[AnnotationRestartCount])
	if err != nil {
		rc = int(s.GetMetadata().GetAttempt())
	}
	ct := runtime.Container{
		ID: s.Id, PodUID: l[LabelPodUID], PodNamespace: l[LabelPodNamespace], PodName: l[LabelPodName],
		Name: s.GetMetadata().GetName(), Kind: runtime.KindContainer, Init: a[AnnotationInit] == "true", Ephemeral: a[AnnotationEphemeral] == "true",
		RestartCount: rc, Hash: a[AnnotationHash], Image: a[AnnotationImage], ImageID: s.ImageRef, LogPath: s.LogPath,
		ExitCode: s.ExitCode, Reason: s.Reason,
		CreatedAt: nsTime(s.CreatedAt), StartedAt: nsTime(s.StartedAt), FinishedAt: nsTime(s.FinishedAt),
	}
	if ct.Image == "" {
		ct.Image = s.GetImage().GetImage()
	}
	switch s.State {
	case criapi.ContainerState_CONTAINER_CREATED:
		ct.State = runtime.StateCreated
	case criapi.ContainerState_CONTAINER_RUNNING:
		ct.State = runtime.StateRunning
		ct.PID = parseInfo(resp.Info).Pid
	case criapi.ContainerState_CONTAINER_EXITED:
		ct.State = runtime.StateExited
	default:
		ct.State = runtime.StateUnknown
	}
	if lr := s.GetResources().GetLinux(); lr != nil {
		ct.Resources = &runtime.Resources{CPUShares: uint64(max(lr.CpuShares, 0)), CPUQuota: lr.CpuQuota, CPUPeriod: uint64(max(lr.CpuPeriod, 0)), MemoryLimit: lr.MemoryLimitInBytes}
	}
	return ct, nil
}

// ListPodContainers lists the pod's sandboxes (ListPodSandbox) and
// containers (ListContainers), or every pod's for podUID "". The status
// of each (PodSandboxStatus: IP, process; ContainerStatus: times, exit,
// resources) is asked only for one not seen before or whose listed state
// changed since its status was read, and verbosely (the process ID) only
// for one running; the others' is the status read then.
func (r *Runtime) ListPodContainers(ctx context.Context, podUID string) ([]runtime.Container, error) {
	sel := r.selector(podUID)
	lctx, cancel := r.callCtx(ctx)
	sbs, err := r.rs.ListPodSandbox(lctx, &criapi.ListPodSandboxRequest{Filter: &criapi.PodSandboxFilter{LabelSelector: sel}})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("ListPodSandbox: %w", err)
	}
	lctx, cancel = r.callCtx(ctx)
	cs, err := r.rs.ListContainers(lctx, &criapi.ListContainersRequest{Filter: &criapi.ContainerFilter{LabelSelector: sel}})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("ListContainers: %w", err)
	}
	out := make([]runtime.Container, 0, len(sbs.Items)+len(cs.Containers))
	for _, s := range sbs.Items {
		if s.Labels[LabelPodUID] == "" {
			continue // not a kubelet's
		}
		r.remember(s.Id, true)
		state := int32(s.State)
		ct, gen, ok := r.cachedStatus(s.Id, state)
		if !ok {
			ct, err = r.sandboxStatus(ctx, s.Id, s.State == criapi.PodSandboxState_SANDBOX_READY)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			r.cacheStatus(s.Id, state, ct, gen)
		}
		out = append(out, ct)
	}
	for _, c := range cs.Containers {
		if c.Labels[LabelPodUID] == "" {
			continue
		}
		r.remember(c.Id, false)
		state := int32(c.State)
		ct, gen, ok := r.cachedStatus(c.Id, state)
		if !ok {
			ct, err = r.containerStatus(ctx, c.Id, c.State == criapi.ContainerState_CONTAINER_RUNNING)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			ct.SandboxID = c.PodSandboxId
			// Cached under the state the status itself gives: a
			// container listed running that exited before its status
			// was read is read again at the next list.
			if toState(ct.State) == c.State {
				r.cacheStatus(c.Id, state, ct, gen)
			}
		}
		out = append(out, ct)
	}
	return out, nil
}

// toState is the CRI state of a runtime.State.
func toState(s runtime.State) criapi.ContainerState {
	switch s {
	case runtime.StateCreated:
		return criapi.ContainerState_CONTAINER_CREATED
	case runtime.StateRunning:
		return criapi.ContainerState_CONTAINER_RUNNING
	case runtime.StateExited:
		return criapi.ContainerState_CONTAINER_EXITED
	}
	return criapi.ContainerState_CONTAINER_UNKNOWN
}

// CreateContainer creates a container in its pod's sandbox
// (CreateContainer) with kube's labels, annotations and log path.
func (r *Runtime) CreateContainer(ctx context.Context, cfg runtime.ContainerConfig) (string, error) {
	sc := r.sandboxConfig(cfg.PodUID, cfg.PodNamespace, cfg.PodName, 0, cfg.HostNetwork, cfg.PodLabels, cfg.PodAnnotations)
	// The runtime takes the container's HOSTNAME from this copy of the
	// sandbox's config, as RunSandbox gave it.
	if !cfg.HostNetwork {
		sc.Hostname = cfg.Hostname
	}
	// The runtime checks a privileged container against this copy of the
	// sandbox's config (RunSandbox made the sandbox privileged).
	sc.Linux.SecurityContext.Privileged = cfg.Security.Privileged
	logPath := filepath.Join(cfg.Name, strconv.Itoa(cfg.RestartCount)+".log")
	if cfg.LogPath != "" {
		rel, err := filepath.Rel(sc.LogDirectory, cfg.LogPath)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", fmt.Errorf("log path %s is not under the pod's log directory %s (--pod-logs-dir)", cfg.LogPath, sc.LogDirectory)
		}
		logPath = rel
	}
	if err := os.MkdirAll(filepath.Join(sc.LogDirectory, filepath.Dir(logPath)), 0o755); err != nil {
		return "", fmt.Errorf("container log directory: %w", err)
	}
	nsOpts := &criapi.NamespaceOption{Network: sc.Linux.SecurityContext.NamespaceOptions.Network, Pid: criapi.NamespaceMode_CONTAINER, Ipc: criapi.NamespaceMode_POD}
	if cfg.TargetPID != 0 {
		target, err := r.containerWithPID(ctx, cfg.PodUID, cfg.TargetPID)
		if err != nil {
			return "", err
		}
		nsOpts.Pid, nsOpts.TargetId = criapi.NamespaceMode_TARGET, target
	}
	labels := r.podLabels(cfg.PodUID, cfg.PodNamespace, cfg.PodName, nil)
	labels[LabelContainerName] = cfg.Name
	annotations := maps.Clone(cfg.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationHash], annotations[AnnotationRestartCount], annotations[AnnotationImage] = cfg.Hash, strconv.Itoa(cfg.RestartCount), cfg.Image
	if cfg.Init {
		annotations[AnnotationInit] = "true"
	}
	if cfg.Ephemeral {
		annotations[AnnotationEphemeral] = "true"
	}
	cc := &criapi.ContainerConfig{
		Metadata: &criapi.ContainerMetadata{Name: cfg.Name, Attempt: uint32(cfg.RestartCount)},
		Image:    &criapi.ImageSpec{Image: cfg.ImageRef, UserSpecifiedImage: cfg.Image},
		Command:  cfg.Command, Args: cfg.Args, WorkingDir: cfg.WorkingDir,
		Labels: labels, Annotations: annotations, LogPath: logPath,
		Stdin: cfg.Stdin, StdinOnce: cfg.StdinOnce, Tty: cfg.TTY,
		Linux: &criapi.LinuxContainerConfig{Resources: toResources(cfg.Resources), SecurityContext: toSecurity(cfg.Security, nsOpts)},
	}
	for _, e := range cfg.Env {
		k, v, _ := strings.Cut(e, "=")
		cc.Envs = append(cc.Envs, &criapi.KeyValue{Key: k, Value: []byte(v)})
	}
	for _, m := range cfg.Mounts {
		cc.Mounts = append(cc.Mounts, &criapi.Mount{ContainerPath: m.ContainerPath, HostPath: m.HostPath, Readonly: m.ReadOnly})
	}
	rctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.rs.CreateContainer(rctx, &criapi.CreateContainerRequest{PodSandboxId: cfg.SandboxID, Config: cc, SandboxConfig: sc})
	if err != nil {
		return "", fmt.Errorf("CreateContainer: %w", err)
	}
	r.remember(resp.ContainerId, false)
	return resp.ContainerId, nil
}

// containerWithPID finds the running container of the pod whose main
// process is pid (an ephemeral container's target).
func (r *Runtime) containerWithPID(ctx context.Context, podUID string, pid uint32) (string, error) {
	cs, err := r.ListPodContainers(ctx, podUID)
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		if c.Kind == runtime.KindContainer && c.PID == pid && c.State == runtime.StateRunning {
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("no running container of pod %s has process %d", podUID, pid)
}

func toResources(res runtime.Resources) *criapi.LinuxContainerResources {
	return &criapi.LinuxContainerResources{CpuPeriod: int64(res.CPUPeriod), CpuQuota: res.CPUQuota, CpuShares: int64(res.CPUShares), MemoryLimitInBytes: res.MemoryLimit}
}

func toProfile(p runtime.SecurityProfile) *criapi.SecurityProfile {
	switch p.Type {
	case runtime.ProfileRuntimeDefault:
		return &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_RuntimeDefault}
	case runtime.ProfileUnconfined:
		return &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_Unconfined}
	case runtime.ProfileLocalhost:
		return &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_Localhost, LocalhostRef: p.LocalhostRef}
	}
	return nil
}

// toSecurity is the LinuxContainerSecurityContext kube's kuberuntime
// derives from the same fields.
func toSecurity(s runtime.Security, ns *criapi.NamespaceOption) *criapi.LinuxContainerSecurityContext {
	sc := &criapi.LinuxContainerSecurityContext{
		Privileged: s.Privileged, NamespaceOptions: ns, RunAsUsername: s.RunAsUsername,
		ReadonlyRootfs: s.ReadOnlyRootfs, SupplementalGroups: s.SupplementalGroups, NoNewPrivs: s.NoNewPrivs,
		MaskedPaths: s.MaskedPaths, ReadonlyPaths: s.ReadonlyPaths,
	}
	if s.RunAsUser != nil {
		sc.RunAsUser = &criapi.Int64Value{Value: *s.RunAsUser}
	}
	if s.RunAsGroup != nil {
		sc.RunAsGroup = &criapi.Int64Value{Value: *s.RunAsGroup}
	}
	if s.StrictSupplementalGroups {
		sc.SupplementalGroupsPolicy = criapi.SupplementalGroupsPolicy_Strict
	}
	if len(s.AddCapabilities) > 0 || len(s.DropCapabilities) > 0 {
		sc.Capabilities = &criapi.Capability{AddCapabilities: s.AddCapabilities, DropCapabilities: s.DropCapabilities}
	}
	// The zero seccomp profile is no filter (the pod asked for none); the
	// zero AppArmor profile leaves the runtime's default.
	sc.Seccomp = toProfile(s.Seccomp)
	if sc.Seccomp == nil {
		sc.Seccomp = &criapi.SecurityProfile{ProfileType: criapi.SecurityProfile_Unconfined}
	}
	sc.Apparmor = toProfile(s.AppArmor)
	return sc
}

// StartContainer starts a created container.
func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	if _, err := r.rs.StartContainer(ctx, &criapi.StartContainerRequest{ContainerId: id}); err != nil {
		return fmt.Errorf("StartContainer: %w", err)
	}
	return nil
}

// StopContainer stops a container (StopContainer with the grace period in
// whole seconds, rounded up) or a sandbox (StopPodSandbox, which also
// detaches it from the pod network).
func (r *Runtime) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	sb, err := r.isSandbox(ctx, id)
	if err != nil {
		return err
	}
	timeout := int64((grace + time.Second - 1) / time.Second)
	cctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout+grace)
	defer cancel()
	if sb {
		_, err = r.rs.StopPodSandbox(cctx, &criapi.StopPodSandboxRequest{PodSandboxId: id})
	} else {
		_, err = r.rs.StopContainer(cctx, &criapi.StopContainerRequest{ContainerId: id, Timeout: timeout})
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	return nil
}

// RemoveContainer removes a container or a sandbox (stopping it first).
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	sb, err := r.isSandbox(ctx, id)
	if err != nil {
		return err
	}
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	if sb {
		if _, err = r.rs.StopPodSandbox(cctx, &criapi.StopPodSandboxRequest{PodSandboxId: id}); err == nil || isNotFound(err) {
			_, err = r.rs.RemovePodSandbox(cctx, &criapi.RemovePodSandboxRequest{PodSandboxId: id})
		}
	} else {
		_, err = r.rs.RemoveContainer(cctx, &criapi.RemoveContainerRequest{ContainerId: id})
	}
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("remove %s: %w", id, err)
	}
	r.forget(id)
	return nil
}

// UpdateContainerResources changes a running container's cgroup settings
// (UpdateContainerResources); zero values are left as they are by the
// runtime.
func (r *Runtime) UpdateContainerResources(ctx context.Context, id string, res runtime.Resources) error {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	defer r.dropStatus(id) // its status now reports the new resources
	if _, err := r.rs.UpdateContainerResources(ctx, &criapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: toResources(res)}); err != nil {
		return fmt.Errorf("UpdateContainerResources: %w", err)
	}
	return nil
}

// RemovePodCgroups removes the pod's cgroup directories the runtime left
// (the pod<UID> parent of its containers' cgroups), deepest first;
// directories still holding tasks stay.
func (r *Runtime) RemovePodCgroups(podUID string) { runtime.RemoveCgroup(r.PodCgroup(podUID)) }

// relist lists the runtime's containers and sandboxes every RelistPeriod
// and reports to OnExit those that stopped since the last list, as kube's
// PLEG reports ContainerDied: one seen exited now and not before (also one
// that started and exited between two lists), or one gone that was
// running.
func (r *Runtime) relist(ctx context.Context) {
	defer close(r.done)
	var prev map[string]listed
	t := time.NewTicker(r.cfg.RelistPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := r.listStates(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Debug("relist", "err", err)
			}
			continue
		}
		r.mu.Lock()
		onExit := r.onExit
		r.mu.Unlock()
		if prev != nil && onExit != nil {
			for id, c := range now {
				if p, ok := prev[id]; c.exited && (!ok || !p.exited) {
					onExit(c.uid, id)
				}
			}
			for id, p := range prev {
				if _, ok := now[id]; !ok && !p.exited {
					onExit(p.uid, id)
				}
			}
		}
		prev = now
	}
}

// listed is what a relist keeps of a container or sandbox: its pod and
// whether it has stopped (a container exited, a sandbox not ready).
type listed struct {
	uid    string
	exited bool
}

func (r *Runtime) listStates(ctx context.Context) (map[string]listed, error) {
	sel := r.selector("")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out := map[string]listed{}
	cs, err := r.rs.ListContainers(ctx, &criapi.ListContainersRequest{Filter: &criapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Containers {
		if uid := c.Labels[LabelPodUID]; uid != "" {
			out[c.Id] = listed{uid, c.State == criapi.ContainerState_CONTAINER_EXITED}
		}
	}
	sbs, err := r.rs.ListPodSandbox(ctx, &criapi.ListPodSandboxRequest{Filter: &criapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return nil, err
	}
	for _, sb := range sbs.Items {
		if uid := sb.Labels[LabelPodUID]; uid != "" {
			out[sb.Id] = listed{uid, sb.State != criapi.PodSandboxState_SANDBOX_READY}
		}
	}
	// Statuses of what the runtime no longer has (removed by another
	// client, or by RemovePodSandbox with their sandbox) go.
	r.mu.Lock()
	for id := range r.statuses {
		if _, ok := out[id]; !ok {
			delete(r.statuses, id)
		}
	}
	r.mu.Unlock()
	return out, nil
}
