package runtime

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// NormalizeImage turns a pod's image ("busybox", "127.0.0.1:5000/x") into
// the fully qualified reference containerd stores
// ("docker.io/library/busybox:latest").
func NormalizeImage(image string) (string, error) {
	named, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", fmt.Errorf("invalid image %q: %w", image, err)
	}
	return named.String(), nil
}

// ImageID is the imageID kube reports for a stored image: repository plus
// manifest digest.
func ImageID(ref, digest string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return digest
	}
	return named.Name() + "@" + digest
}

// IsLatest reports whether the image names a tag explicitly or implicitly
// latest ("busybox" and "busybox:latest" are latest, digests are not).
func IsLatest(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return false
	}
	if _, ok := named.(reference.Digested); ok {
		return false
	}
	if t, ok := named.(reference.Tagged); ok {
		return t.Tag() == "latest"
	}
	return true
}

// ImagePresent reports whether ref (normalized) is stored, with its imageID.
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (string, bool, error) {
	img, err := r.client.GetImage(r.nsctx(ctx), ref)
	if errdefs.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return ImageID(ref, img.Target().Digest.String()), true, nil
}

// PullImage pulls and unpacks ref (normalized), reaching the registries in
// Config.InsecureRegistries over plain HTTP. It returns the imageID and size.
func (r *Runtime) PullImage(ctx context.Context, ref string) (string, int64, error) {
	ctx = r.nsctx(ctx)
	insecure := r.cfg.InsecureRegistries
	hosts := docker.ConfigureDefaultRegistries(
		docker.WithPlainHTTP(func(host string) (bool, error) {
			return slices.Contains(insecure, host), nil
		}),
		docker.WithClient(http.DefaultClient),
	)
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: hosts})
	img, err := r.client.Pull(ctx, ref, containerd.WithPullUnpack, containerd.WithResolver(resolver))
	if err != nil {
		return "", 0, err
	}
	size, _ := img.Size(ctx)
	return ImageID(ref, img.Target().Digest.String()), size, nil
}

// BuiltSandboxImage is the sandbox image EnsureSandboxImage builds from the
// host's static busybox when it is missing (there is no registry to pull
// a pause image from).
const BuiltSandboxImage = testimage.Ref

// EnsureSandboxImage makes the pause image (Config.SandboxImage) available:
// present, pulled, or — for the default test image — built from the host's
// static busybox, since the cluster has no registry to pull a pause image
// from. Without a sandbox image it does nothing.
func (r *Runtime) EnsureSandboxImage(ctx context.Context) error {
	image := r.cfg.SandboxImage
	if image == "" {
		return nil
	}
	ref, err := NormalizeImage(image)
	if err != nil {
		return err
	}
	if _, ok, err := r.ImagePresent(ctx, ref); err != nil {
		return err
	} else if ok {
		return nil
	}
	if image == BuiltSandboxImage {
		r.log.Info("building the pod sandbox image from the host's busybox", "image", image)
		return testimage.Import(r.nsctx(ctx), r.client, image)
	}
	if _, _, err := r.PullImage(ctx, ref); err != nil {
		return fmt.Errorf("pull pod sandbox image %s: %w", image, err)
	}
	return nil
}
