package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/runtime/containerd"
	"github.com/minik8s/minik8s/kubelet/runtime/cri"
)

// driver is the runtime driver the flags select, with what the kubelet
// needs beyond runtime.Runtime: health, version, exits, shutdown. Runtime
// is the driver itself (its optional interfaces intact), for the pod
// manager.
type driver struct {
	runtime.Runtime
	// checkName is the healthz check of the runtime.
	checkName     string
	close         func() error
	status        func(context.Context) error
	version       func(context.Context) (string, string, error)
	setOnExit     func(func(podUID, containerID string))
	networkStatus func(context.Context) error // nil: the kubelet's network alone
}

func (d *driver) Close() error                     { return d.close() }
func (d *driver) Status(ctx context.Context) error { return d.status(ctx) }
func (d *driver) Version(ctx context.Context) (string, string, error) {
	return d.version(ctx)
}
func (d *driver) SetOnExit(f func(podUID, containerID string)) { d.setOnExit(f) }

// newRuntime connects the runtime driver: CRI with
// --container-runtime-endpoint (a runtime that does not answer yet leaves
// the node NotReady, "container runtime is down", until it does), else
// containerd's native client at --containerd-address with the sandbox
// image present.
func newRuntime(ctx context.Context, o Options, log *slog.Logger) (*driver, error) {
	if o.ContainerRuntimeEndpoint != "" {
		if o.PodInfraContainerImage != "" {
			log.Info("the CRI runtime runs sandboxes from its own sandbox image; --pod-infra-container-image only names it", "image", o.PodInfraContainerImage)
		}
		mounter := containerd.NewCRIImageMounter(o.ContainerRuntimeEndpoint, RuntimeStateDir("image-volumes"), log)
		rt, err := cri.New(ctx, cri.Config{Endpoint: o.ContainerRuntimeEndpoint, ImageEndpoint: o.ImageServiceEndpoint,
			PodLogsDir: o.PodLogsDir, CgroupParent: o.CgroupRoot, Owner: o.RuntimeOwner, ImageMounter: mounter, Logger: log})
		if err != nil {
			return nil, err
		}
		mounter.RuntimeName = rt.Version
		closeAll := func() error { return errors.Join(mounter.Close(), rt.Close()) }
		return &driver{Runtime: rt, checkName: "container-runtime", close: closeAll, status: rt.Status, version: rt.Version,
			setOnExit: rt.SetOnExit, networkStatus: rt.NetworkStatus}, nil
	}
	rt, err := containerd.New(ctx, containerd.Config{
		Address: o.ContainerdAddress, Namespace: o.ContainerdNamespace, InsecureRegistries: o.InsecureRegistries, RegistryConfigPath: o.RegistryConfigPath,
		SandboxImage: o.PodInfraContainerImage, StateDir: RuntimeStateDir(o.ContainerdNamespace), CgroupParent: o.CgroupRoot, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	if err := rt.EnsureSandboxImage(ctx); err != nil {
		rt.Close()
		return nil, err
	}
	return &driver{Runtime: rt, checkName: "containerd", close: rt.Close, status: rt.Status, version: rt.Version, setOnExit: rt.SetOnExit}, nil
}
