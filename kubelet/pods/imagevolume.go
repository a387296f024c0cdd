package pods

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// imageVolumePlugin is the directory of a pod's image volumes under its
// volumes directory, as kube names the plugin.
const imageVolumePlugin = "kubernetes.io~image"

// imageVolumeSource is a volume's image source (core/v1
// ImageVolumeSource): an OCI image mounted read-only.
type imageVolumeSource struct {
	Reference  string         `json:"reference,omitempty"`
	PullPolicy api.PullPolicy `json:"pullPolicy,omitempty"`
}

// setUpImageVolume makes the image volume name available at target: the
// image pulled by the volume's pull policy (Always when unset and the
// reference is :latest or untagged, else IfNotPresent — kube's default),
// with the Pulling/Pulled events of a container's image, then its root
// filesystem mounted read-only by the runtime. A volume already mounted
// is left as it is: the image is pulled once per mount, as kube pulls a
// pod's image volumes when it starts the pod's containers.
func (m *Manager) setUpImageVolume(ctx context.Context, pod *api.Pod, name string, raw json.RawMessage, target string) (string, error) {
	var src imageVolumeSource
	if err := json.Unmarshal(raw, &src); err != nil {
		return "", fmt.Errorf("image volume %q: %w", name, err)
	}
	im, ok := m.rt.(runtime.ImageMounter)
	if !ok {
		return "", runtime.ErrNoImageMounts
	}
	if entries, err := os.ReadDir(target); err == nil && len(entries) > 0 {
		return target, nil // mounted: an image's root is never empty
	}
	ref, err := runtime.NormalizeImage(src.Reference)
	if err != nil {
		return "", fmt.Errorf("failed to apply default image tag %q: %w", src.Reference, err)
	}
	policy := src.PullPolicy
	if policy == "" {
		policy = api.PullIfNotPresent
		if runtime.IsLatest(src.Reference) {
			policy = api.PullAlways
		}
	}
	_, present, err := m.rt.ImagePresent(ctx, ref)
	if err != nil {
		return "", err
	}
	switch {
	case policy == api.PullNever && !present:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", src.Reference)
		m.rec.Event(pod, api.EventTypeWarning, "ErrImageNeverPull", msg)
		return "", errors.New(msg)
	case policy != api.PullAlways && present:
		m.rec.Eventf(pod, api.EventTypeNormal, "Pulled", "Container image %q already present on machine", src.Reference)
	default:
		m.rec.Eventf(pod, api.EventTypeNormal, "Pulling", "Pulling image %q", src.Reference)
		start := time.Now()
		_, size, err := m.rt.PullImage(ctx, ref)
		if err != nil {
			m.rec.Eventf(pod, api.EventTypeWarning, "Failed", "Failed to pull image %q: %v", src.Reference, err)
			return "", fmt.Errorf("failed to pull image %q: %w", src.Reference, err)
		}
		d := time.Since(start).Round(time.Millisecond)
		m.rec.Eventf(pod, api.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.", src.Reference, d, d, size)
	}
	if err := im.MountImage(ctx, ref, target); err != nil {
		return "", err
	}
	return target, nil
}

// unmountImageVolumes unmounts a pod's image volumes, so that removing the
// pod's directory never walks into an image.
func (m *Manager) unmountImageVolumes(ctx context.Context, podDir string) error {
	im, ok := m.rt.(runtime.ImageMounter)
	if !ok {
		return nil
	}
	dir := filepath.Join(podDir, "volumes", imageVolumePlugin)
	vols, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range vols {
		errs = append(errs, im.UnmountImage(ctx, filepath.Join(dir, v.Name())))
	}
	return errors.Join(errs...)
}
