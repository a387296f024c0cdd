package containerd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"syscall"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	"github.com/minik8s/minik8s/kubelet/runtime"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The runc shim groups the containers carrying the same sandbox-id
// annotation into one shim process.
const (
	annotationSandboxID     = "io.kubernetes.cri.sandbox-id"
	annotationContainerType = "io.kubernetes.cri.container-type"
)

func (r *Runtime) labels(podUID, ns, name, cname, kind string) map[string]string {
	return map[string]string{LabelPodUID: podUID, LabelPodNamespace: ns, LabelPodName: name, LabelContainerName: cname, LabelKind: kind}
}

// RunSandbox sets up a pod sandbox. Without Config.SandboxImage the
// sandbox is a network namespace of its own (bind-mounted under
// /var/run/netns) recorded as a containerd container without a task; with
// it, a pause container owning fresh network, IPC and UTS namespaces.
func (r *Runtime) RunSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Container, error) {
	ctx = r.nsctx(ctx)
	id := newID()
	l := r.labels(cfg.PodUID, cfg.PodNamespace, cfg.PodName, runtime.SandboxName, runtime.KindSandbox)
	now := time.Now()
	l[LabelStartedAt] = now.UTC().Format(time.RFC3339Nano)
	if r.cfg.SandboxImage == "" {
		path := ""
		if cfg.HostNetwork {
			l[LabelHostNetwork] = "true"
			// The marker lives on the runtime's state directory (tmpfs /run):
			// a node reboot removes it, so the sandbox counts as dead and the
			// pod restarts in a new one, as with a namespace or a pause
			// container.
			if err := r.markHostSandbox(id); err != nil {
				return runtime.Container{}, err
			}
		} else {
			var err error
			if path, err = newNetNS("minik8s-" + id[:32]); err != nil {
				return runtime.Container{}, err
			}
			l[LabelNetNS] = path
		}
		if _, err := r.client.NewContainer(ctx, id, containerd.WithContainerLabels(l), containerd.WithNewSpec()); err != nil {
			_ = removeNetNS(path)
			r.unmarkHostSandbox(id)
			return runtime.Container{}, fmt.Errorf("record sandbox: %w", err)
		}
		ct := fromLabels(id, l)
		ct.State, ct.CreatedAt = runtime.StateRunning, now
		return ct, nil
	}
	img, err := r.client.GetImage(ctx, r.cfg.SandboxImage)
	if err != nil {
		return runtime.Container{}, fmt.Errorf("sandbox image %s: %w", r.cfg.SandboxImage, err)
	}
	l[LabelImage] = r.cfg.SandboxImage
	delete(l, LabelStartedAt)
	opts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithProcessArgs(r.cfg.SandboxCommand...),
		oci.WithHostname(cfg.Hostname),
		oci.WithCgroup(CgroupPath(r.cfg.CgroupParent, cfg.PodUID, id)),
		oci.WithCPUShares(2),
		oci.WithAnnotations(map[string]string{annotationSandboxID: id, annotationContainerType: "sandbox"}),
	}
	if cfg.HostNetwork {
		opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace))
	}
	if len(cfg.Sysctls) > 0 {
		opts = append(opts, withSysctls(cfg.Sysctls))
	}
	c, err := r.client.NewContainer(ctx, id,
		containerd.WithImage(img),
		containerd.WithNewSnapshot(id, img),
		containerd.WithContainerLabels(l),
		containerd.WithNewSpec(opts...))
	if err != nil {
		return runtime.Container{}, fmt.Errorf("create sandbox: %w", err)
	}
	t, err := c.NewTask(ctx, cio.NullIO)
	if err != nil {
		_ = c.Delete(ctx, containerd.WithSnapshotCleanup)
		return runtime.Container{}, fmt.Errorf("create sandbox task: %w", err)
	}
	// Wait before Start, so that an exit right after the start is seen.
	wait, err := t.Wait(r.ctx)
	if err != nil {
		_, _ = t.Delete(ctx, containerd.WithProcessKill)
		_ = c.Delete(ctx, containerd.WithSnapshotCleanup)
		return runtime.Container{}, fmt.Errorf("wait sandbox task: %w", err)
	}
	if err := t.Start(ctx); err != nil {
		_, _ = t.Delete(ctx, containerd.WithProcessKill)
		_ = c.Delete(ctx, containerd.WithSnapshotCleanup)
		return runtime.Container{}, fmt.Errorf("start sandbox: %w", err)
	}
	if _, err := c.SetLabels(ctx, map[string]string{LabelStartedAt: now.UTC().Format(time.RFC3339Nano)}); err != nil {
		return runtime.Container{}, err
	}
	ct := fromLabels(id, l)
	ct.State, ct.PID, ct.StartedAt, ct.CreatedAt = runtime.StateRunning, t.Pid(), now, now
	go r.onExit(c, t, wait)
	return ct, nil
}

// CreateContainer creates (but does not start) a container; it returns the
// containerd ID.
func (r *Runtime) CreateContainer(ctx context.Context, cfg runtime.ContainerConfig) (string, error) {
	ctx = r.nsctx(ctx)
	img, err := r.client.GetImage(ctx, cfg.ImageRef)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", cfg.Image, err)
	}
	imgSpec, err := img.Spec(ctx)
	if err != nil {
		return "", fmt.Errorf("image config of %s: %w", cfg.Image, err)
	}
	id := newID()
	l := r.labels(cfg.PodUID, cfg.PodNamespace, cfg.PodName, cfg.Name, runtime.KindContainer)
	l[LabelRestartCount] = strconv.Itoa(cfg.RestartCount)
	l[LabelHash] = cfg.Hash
	l[LabelLogPath] = cfg.LogPath
	l[LabelImage] = cfg.Image
	l[LabelImageID] = runtime.ImageID(cfg.ImageRef, img.Target().Digest.String())
	if cfg.Init {
		l[LabelInit] = "true"
	}
	if cfg.Stdin {
		l[LabelStdin] = "true"
	}
	if cfg.StdinOnce {
		l[LabelStdinOnce] = "true"
	}
	if cfg.Ephemeral {
		l[LabelEphemeral] = "true"
	}
	opts := []oci.SpecOpts{oci.WithImageConfig(img)}
	secOpts, err := securityOpts(cfg.Security, imgSpec.Config.User)
	if err != nil {
		return "", fmt.Errorf("security context of %s: %w", cfg.Name, err)
	}
	opts = append(opts, secOpts...)
	if args := processArgs(imgSpec.Config.Entrypoint, imgSpec.Config.Cmd, cfg.Command, cfg.Args); len(args) > 0 {
		opts = append(opts, oci.WithProcessArgs(args...))
	}
	if len(cfg.Env) > 0 {
		opts = append(opts, oci.WithEnv(cfg.Env))
	}
	if cfg.WorkingDir != "" {
		opts = append(opts, oci.WithProcessCwd(cfg.WorkingDir))
	}
	if cfg.TTY {
		opts = append(opts, oci.WithTTY)
	}
	if cfg.SandboxPID != 0 {
		for _, t := range []specs.LinuxNamespaceType{specs.NetworkNamespace, specs.IPCNamespace, specs.UTSNamespace} {
			opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: t, Path: fmt.Sprintf("/proc/%d/ns/%s", cfg.SandboxPID, nsFile(t))}))
		}
	} else {
		switch {
		case cfg.HostNetwork:
			opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace))
		case cfg.NetNS != "":
			opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: cfg.NetNS}))
		}
		if cfg.Hostname != "" {
			opts = append(opts, oci.WithHostname(cfg.Hostname))
		}
	}
	if len(cfg.Sysctls) > 0 && cfg.SandboxPID == 0 {
		// No pause process holds the pod's namespaces: each container sets
		// the sysctls in its own IPC namespace and (again, the same values)
		// in the pod's network namespace.
		opts = append(opts, withSysctls(cfg.Sysctls))
	}
	if cfg.TargetPID != 0 {
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.PIDNamespace, Path: fmt.Sprintf("/proc/%d/ns/pid", cfg.TargetPID)}))
	}
	opts = append(opts, oci.WithCgroup(CgroupPath(r.cfg.CgroupParent, cfg.PodUID, id)))
	if cfg.SandboxID != "" {
		// One runc shim serves the whole pod, as with containerd's CRI.
		opts = append(opts, oci.WithAnnotations(map[string]string{annotationSandboxID: cfg.SandboxID, annotationContainerType: "container"}))
	}
	if cfg.CPUShares > 0 {
		opts = append(opts, oci.WithCPUShares(cfg.CPUShares))
	}
	if cfg.CPUQuota > 0 {
		opts = append(opts, oci.WithCPUCFS(cfg.CPUQuota, cfg.CPUPeriod))
	}
	if cfg.MemoryLimit > 0 {
		opts = append(opts, oci.WithMemoryLimit(uint64(cfg.MemoryLimit)))
	}
	l[LabelResources] = formatResources(cfg.Resources)
	// Before the pod's mounts, which may replace it.
	opts = append(opts, withCgroupMount(cfg.Security.Privileged))
	if len(cfg.Mounts) > 0 {
		ms := make([]specs.Mount, 0, len(cfg.Mounts))
		for _, m := range cfg.Mounts {
			o := []string{"rbind", "rprivate", "rw"}
			if m.ReadOnly {
				o[2] = "ro"
			}
			ms = append(ms, specs.Mount{Destination: m.ContainerPath, Type: "bind", Source: m.HostPath, Options: o})
		}
		opts = append(opts, withMountsReplacing(ms))
	}
	_, err = r.client.NewContainer(ctx, id,
		containerd.WithImage(img),
		containerd.WithNewSnapshot(id, img),
		containerd.WithContainerLabels(l),
		containerd.WithNewSpec(opts...))
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	return id, nil
}

// withMountsReplacing adds mounts, dropping default mounts at the same
// destination (for example /etc/resolv.conf is not a default, but /dev/shm
// may be replaced).
func withMountsReplacing(ms []specs.Mount) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		dst := map[string]bool{}
		for _, m := range ms {
			dst[m.Destination] = true
		}
		kept := s.Mounts[:0]
		for _, m := range s.Mounts {
			if !dst[m.Destination] {
				kept = append(kept, m)
			}
		}
		s.Mounts = append(kept, ms...)
		return nil
	}
}

func nsFile(t specs.LinuxNamespaceType) string {
	switch t {
	case specs.NetworkNamespace:
		return "net"
	case specs.IPCNamespace:
		return "ipc"
	case specs.UTSNamespace:
		return "uts"
	case specs.PIDNamespace:
		return "pid"
	}
	return string(t)
}

// processArgs applies kube's command/args rules to the image's
// entrypoint/cmd.
func processArgs(entrypoint, cmd, command, args []string) []string {
	switch {
	case len(command) > 0:
		return append(append([]string{}, command...), args...)
	case len(args) > 0:
		return append(append([]string{}, entrypoint...), args...)
	default:
		return append(append([]string{}, entrypoint...), cmd...)
	}
}

// StartContainer starts a created container with its output going to its
// log file, and records its start time.
func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	ctx = r.nsctx(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return fmt.Errorf("load container %s: %w", id, err)
	}
	l, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return err
	}
	tio, creator, err := r.newTaskIO(l[LabelLogPath], spec.Process != nil && spec.Process.Terminal,
		newAttachHub(l[LabelStdin] == "true", l[LabelStdinOnce] == "true"))
	if err != nil {
		return err
	}
	t, err := c.NewTask(ctx, creator)
	if err != nil {
		tio.log.Close()
		return fmt.Errorf("create task: %w", err)
	}
	tio.io = t.IO()
	r.mu.Lock()
	r.tasks[id] = tio
	r.mu.Unlock()
	wait, err := t.Wait(r.ctx)
	if err != nil {
		return fmt.Errorf("wait task: %w", err)
	}
	if err := t.Start(ctx); err != nil {
		_, _ = t.Delete(ctx, containerd.WithProcessKill)
		r.dropIO(id)
		return fmt.Errorf("start task: %w", err)
	}
	if _, err := c.SetLabels(ctx, map[string]string{LabelStartedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
		return err
	}
	go r.onExit(c, t, wait)
	return nil
}

func (r *Runtime) newTaskIO(logPath string, tty bool, hub *attachHub) (*taskIO, cio.Creator, error) {
	if logPath == "" {
		return nil, nil, errors.New("container has no log path")
	}
	lf, err := openLogFile(logPath)
	if err != nil {
		return nil, nil, err
	}
	tio := &taskIO{log: lf, hub: hub}
	stdout := &streamWriter{log: lf, stream: "stdout"}
	stderr := &streamWriter{log: lf, stream: "stderr"}
	tio.out = []*streamWriter{stdout, stderr}
	opts := []cio.Opt{cio.WithStreams(hub.containerStdin(), teeWriter{stdout, hub, false}, teeWriter{stderr, hub, true}),
		cio.WithFIFODir(r.fifoDir())}
	if tty {
		opts = append(opts, cio.WithTerminal)
	}
	return tio, cio.NewCreator(opts...), nil
}

func (r *Runtime) fifoDir() string { return r.cfg.StateDir + "/fifo" }

// Adopt re-attaches to a running container left by a previous kubelet: its
// output goes to its log file again and its exit is recorded.
func (r *Runtime) Adopt(ctx context.Context, id string) error {
	ctx = r.nsctx(ctx)
	r.mu.Lock()
	_, held := r.tasks[id]
	r.mu.Unlock()
	if held {
		return nil
	}
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return err
	}
	l, err := c.Labels(ctx)
	if err != nil {
		return err
	}
	if l[LabelKind] == runtime.KindSandbox {
		if l[LabelNetNS] != "" || l[LabelHostNetwork] == "true" {
			return nil // a sandbox without a pause container has no task
		}
		t, err := c.Task(ctx, nil)
		if err != nil {
			return err
		}
		r.watchExit(c, t)
		r.mu.Lock()
		r.tasks[id] = &taskIO{io: nullIO{}, log: nil}
		r.mu.Unlock()
		return nil
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return err
	}
	lf, err := openLogFile(l[LabelLogPath])
	if err != nil {
		return err
	}
	stdout := &streamWriter{log: lf, stream: "stdout"}
	stderr := &streamWriter{log: lf, stream: "stderr"}
	// The stdin a previous kubelet held is gone with it: attach after a
	// restart gets the output only.
	hub := newAttachHub(false, false)
	opts := []cio.Opt{cio.WithStreams(nil, teeWriter{stdout, hub, false}, teeWriter{stderr, hub, true})}
	if spec.Process != nil && spec.Process.Terminal {
		opts = append(opts, cio.WithTerminal)
	}
	t, err := c.Task(ctx, cio.NewAttach(opts...))
	if err != nil {
		lf.Close()
		return fmt.Errorf("attach to %s: %w", id, err)
	}
	tio := &taskIO{io: t.IO(), log: lf, out: []*streamWriter{stdout, stderr}, hub: hub}
	r.mu.Lock()
	r.tasks[id] = tio
	r.mu.Unlock()
	wait, err := t.Wait(r.ctx)
	if err != nil {
		return err
	}
	go r.onExit(c, t, wait)
	return nil
}

type nullIO struct{}

func (nullIO) Config() cio.Config { return cio.Config{} }
func (nullIO) Cancel()            {}
func (nullIO) Wait()              {}
func (nullIO) Close() error       { return nil }

func (r *Runtime) watchExit(c containerd.Container, t containerd.Task) {
	wait, err := t.Wait(r.ctx)
	if err != nil {
		r.log.Warn("cannot wait for sandbox", "container", c.ID(), "err", err)
		return
	}
	go r.onExit(c, t, wait)
}

// onExit records the exit of a task in the container's labels and deletes
// the task, so the exit survives kubelet restarts; it re-waits if the wait
// broke because containerd restarted.
func (r *Runtime) onExit(c containerd.Container, t containerd.Task, wait <-chan containerd.ExitStatus) {
	for {
		st := <-wait
		if r.ctx.Err() != nil {
			return
		}
		if err := st.Error(); err != nil {
			// containerd went away: wait again once it is back.
			time.Sleep(500 * time.Millisecond)
			var werr error
			wait, werr = t.Wait(r.ctx)
			if werr != nil {
				if errdefs.IsNotFound(werr) {
					return
				}
				r.log.Debug("re-wait task", "container", c.ID(), "err", werr)
				ch := make(chan containerd.ExitStatus, 1)
				ch <- *containerd.NewExitStatus(containerd.UnknownExitStatus, time.Time{}, werr)
				wait = ch
			}
			continue
		}
		r.recordExit(c, t, st)
		return
	}
}

func (r *Runtime) recordExit(c containerd.Container, t containerd.Task, st containerd.ExitStatus) {
	ctx := r.ctx
	r.mu.Lock()
	tio := r.tasks[c.ID()]
	delete(r.tasks, c.ID())
	r.mu.Unlock()
	if tio != nil && tio.log != nil {
		done := make(chan struct{})
		go func() { tio.io.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			// A child kept the output open; stop reading.
			tio.io.Cancel()
		}
		for _, w := range tio.out {
			w.Flush()
		}
		if tio.hub != nil {
			tio.hub.close()
		}
	}
	l, _ := c.Labels(ctx)
	code := int32(st.ExitCode())
	fin := st.ExitTime()
	if fin.IsZero() {
		fin = time.Now()
	}
	reason := exitReason(r.cfg.CgroupParent, l[LabelPodUID], c.ID(), code)
	if l[LabelKind] == runtime.KindContainer {
		r.log.Info("container exited", "pod", l[LabelPodNamespace]+"/"+l[LabelPodName], "container", l[LabelContainerName],
			"exitCode", code, "reason", reason)
	}
	if _, err := c.SetLabels(ctx, map[string]string{
		LabelExitCode:   strconv.Itoa(int(code)),
		LabelFinishedAt: fin.UTC().Format(time.RFC3339Nano),
		LabelReason:     reason,
	}); err != nil && ctx.Err() == nil {
		r.log.Warn("record container exit", "container", c.ID(), "err", err)
	}
	if _, err := t.Delete(ctx); err != nil && !errdefs.IsNotFound(err) && ctx.Err() == nil {
		r.log.Warn("delete exited task", "container", c.ID(), "err", err)
	}
	if tio != nil && tio.log != nil {
		tio.io.Close()
		tio.log.Close()
	}
	r.mu.Lock()
	onExit := r.cfg.OnExit
	r.mu.Unlock()
	if onExit != nil && ctx.Err() == nil {
		onExit(l[LabelPodUID], c.ID())
	}
}

// Exec runs cmd in the running container id, copying stdin/stdout/stderr
// (nil streams are not attached), and returns the command's exit code. With
// tty the command gets a terminal (stderr is merged into stdout) resized
// from resize. Cancelling ctx kills the command.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, tty bool, stdin io.Reader, stdout, stderr io.Writer, resize <-chan runtime.TerminalSize) (int, error) {
	if len(cmd) == 0 {
		return -1, errors.New("exec: empty command")
	}
	ctx = r.nsctx(ctx)
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return -1, fmt.Errorf("exec: container %s: %w", id, err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return -1, err
	}
	t, err := c.Task(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("exec: container %s is not running: %w", id, err)
	}
	pspec := *spec.Process
	pspec.Args = cmd
	pspec.Terminal = tty
	var in io.Reader
	var stdinDone chan struct{}
	if stdin != nil {
		stdinDone = make(chan struct{})
		in = &eofReader{r: stdin, done: stdinDone}
	}
	if tty && stderr == nil {
		stderr = io.Discard
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	opts := []cio.Opt{cio.WithStreams(in, stdout, stderr), cio.WithFIFODir(r.fifoDir())}
	if tty {
		opts = append(opts, cio.WithTerminal)
	}
	execID := "exec-" + newID()[:16]
	p, err := t.Exec(ctx, execID, &pspec, cio.NewCreator(opts...))
	if err != nil {
		return -1, fmt.Errorf("exec in %s: %w", id, err)
	}
	// The process is deleted with a context that outlives ctx.
	bg := r.nsctx(context.WithoutCancel(ctx))
	defer func() { _, _ = p.Delete(bg, containerd.WithProcessKill) }()
	wait, err := p.Wait(bg)
	if err != nil {
		return -1, err
	}
	if err := p.Start(ctx); err != nil {
		return -1, fmt.Errorf("exec start: %w", err)
	}
	if stdinDone != nil {
		go func() {
			select {
			case <-stdinDone:
				_ = p.CloseIO(bg, containerd.WithStdinCloser)
			case <-wait:
			}
		}()
	}
	for {
		select {
		case st := <-wait:
			done := make(chan struct{})
			go func() { p.IO().Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
			}
			code, _, err := st.Result()
			if err != nil {
				return -1, err
			}
			return int(code), nil
		case sz, ok := <-resize:
			if !ok {
				resize = nil
				continue
			}
			if tty {
				_ = p.Resize(ctx, uint32(sz.Width), uint32(sz.Height))
			}
		case <-ctx.Done():
			_ = p.Kill(bg, syscall.SIGKILL)
			<-wait
			return -1, ctx.Err()
		}
	}
}

// eofReader closes done when the wrapped reader is exhausted, so the
// command's stdin can be closed.
type eofReader struct {
	r    io.Reader
	done chan struct{}
	shut bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !e.shut {
		e.shut = true
		close(e.done)
	}
	return n, err
}

// ReadFileInContainer is a convenience for tests and probes: it runs cat.
func (r *Runtime) ReadFileInContainer(ctx context.Context, id, path string) ([]byte, error) {
	var out limitedBuffer
	code, err := r.Exec(ctx, id, []string{"cat", path}, false, nil, &out, io.Discard, nil)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("cat %s exited %d", path, code)
	}
	return out.b, nil
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 1<<20 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}
