package cri

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageStatus is the runtime's image ref, or nil when it lacks it.
func (r *Runtime) imageStatus(ctx context.Context, ref string, verbose bool) (*criapi.ImageStatusResponse, error) {
	ctx, cancel := r.callCtx(ctx)
	defer cancel()
	resp, err := r.is.ImageStatus(ctx, &criapi.ImageStatusRequest{Image: &criapi.ImageSpec{Image: ref}, Verbose: verbose})
	if err != nil {
		return nil, fmt.Errorf("ImageStatus %s: %w", ref, err)
	}
	return resp, nil
}

// imageID is what kube reports as a container's imageID: the image's
// repository digest for ref's repository (repo@sha256:...), else its ID.
func imageID(ref string, img *criapi.Image) string {
	if named, err := reference.ParseNormalizedNamed(ref); err == nil {
		for _, d := range img.RepoDigests {
			if repo, _, ok := strings.Cut(d, "@"); ok && repo == named.Name() {
				return d
			}
		}
	}
	if len(img.RepoDigests) > 0 {
		return img.RepoDigests[0]
	}
	return img.Id
}

// ImagePresent asks the image service for ref (ImageStatus).
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (string, bool, error) {
	resp, err := r.imageStatus(ctx, ref, false)
	if err != nil {
		return "", false, err
	}
	if resp.Image == nil {
		return "", false, nil
	}
	return imageID(ref, resp.Image), true, nil
}

// PullImage pulls ref through the image service (PullImage) and returns
// its image ID and size.
func (r *Runtime) PullImage(ctx context.Context, ref string) (string, int64, error) {
	// Pulls take as long as they take; the caller's context bounds them.
	if _, err := r.is.PullImage(ctx, &criapi.PullImageRequest{Image: &criapi.ImageSpec{Image: ref}}); err != nil {
		return "", 0, fmt.Errorf("PullImage %s: %w", ref, err)
	}
	resp, err := r.imageStatus(ctx, ref, false)
	if err != nil {
		return "", 0, err
	}
	if resp.Image == nil {
		return "", 0, fmt.Errorf("image %s is not present after its pull", ref)
	}
	return imageID(ref, resp.Image), int64(resp.Image.Size), nil
}

// ImageUser is the image's USER: from the verbose image status's config
// (containerd), else the uid or user name the image service reports.
func (r *Runtime) ImageUser(ctx context.Context, ref string) (string, error) {
	resp, err := r.imageStatus(ctx, ref, true)
	if err != nil {
		return "", err
	}
	if resp.Image == nil {
		return "", fmt.Errorf("image %s: not present", ref)
	}
	if u := parseInfo(resp.Info).ImageSpec.Config.User; u != "" {
		return u, nil
	}
	if resp.Image.Uid != nil {
		return strconv.FormatInt(resp.Image.Uid.Value, 10), nil
	}
	return resp.Image.Username, nil
}
