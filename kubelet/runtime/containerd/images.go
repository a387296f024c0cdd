package containerd

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	"github.com/containerd/errdefs"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// ImagePresent reports whether ref (normalized) is stored, with its imageID.
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (string, bool, error) {
	img, err := r.client.GetImage(r.nsctx(ctx), ref)
	if errdefs.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return runtime.ImageID(ref, img.Target().Digest.String()), true, nil
}

// PullImage pulls and unpacks ref (normalized), reaching the registries in
// Config.InsecureRegistries over plain HTTP and the others as the hosts
// directory (Config.RegistryConfigPath) configures them. It returns the
// imageID and size.
func (r *Runtime) PullImage(ctx context.Context, ref string) (string, int64, error) {
	ctx = r.nsctx(ctx)
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: r.registryHosts(ctx)})
	img, err := r.client.Pull(ctx, ref, containerd.WithPullUnpack, containerd.WithResolver(resolver))
	if err != nil {
		return "", 0, err
	}
	size, _ := img.Size(ctx)
	return runtime.ImageID(ref, img.Target().Digest.String()), size, nil
}

// registryHosts is where a registry host's images are pulled from: an
// insecure registry over plain HTTP; with a hosts directory, the mirrors
// and settings of its HOST/hosts.toml as containerd's CRI plugin reads
// them (config_path), the host itself over HTTPS when it has none.
func (r *Runtime) registryHosts(ctx context.Context) docker.RegistryHosts {
	insecure := r.cfg.InsecureRegistries
	plain := docker.ConfigureDefaultRegistries(
		docker.WithPlainHTTP(func(host string) (bool, error) {
			return slices.Contains(insecure, host), nil
		}),
		docker.WithClient(http.DefaultClient),
	)
	if r.cfg.RegistryConfigPath == "" {
		return plain
	}
	configured := config.ConfigureHosts(ctx, config.HostOptions{HostDir: config.HostDirFromRoot(r.cfg.RegistryConfigPath)})
	return func(host string) ([]docker.RegistryHost, error) {
		if slices.Contains(insecure, host) {
			return plain(host)
		}
		return configured(host)
	}
}

// EnsureSandboxImage makes the pause image (Config.SandboxImage) available:
// present, or pulled like a pod's image. Without a sandbox image it does
// nothing. The kubelet builds no image itself: on a node without a
// registry, the image is loaded into the kubelet's containerd namespace
// beforehand (scripts/load-image.sh; tests import kubelet/testimage).
func (r *Runtime) EnsureSandboxImage(ctx context.Context) error {
	image := r.cfg.SandboxImage
	if image == "" {
		return nil
	}
	ref, err := runtime.NormalizeImage(image)
	if err != nil {
		return err
	}
	if _, ok, err := r.ImagePresent(ctx, ref); err != nil {
		return err
	} else if ok {
		return nil
	}
	if _, _, err := r.PullImage(ctx, ref); err != nil {
		return fmt.Errorf("pull pod sandbox image %s: %w", image, err)
	}
	return nil
}
