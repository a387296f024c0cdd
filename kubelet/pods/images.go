package pods

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// image applies c's pull policy and returns the image reference to run; on
// failure it records ErrImagePull/ImagePullBackOff and says when to retry.
func (s *podSync) image(ctx context.Context, c *api.Container) (string, time.Duration, error) {
	m, w, pod := s.m, s.w, s.pod
	ref, err := runtime.NormalizeImage(c.Image)
	if err != nil {
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "InvalidImageName", Message: err.Error()})
		m.rec.Eventf(pod, api.EventTypeWarning, "InspectFailed", "Failed to apply default image tag %q: %v", c.Image, err)
		return "", 10 * retrySoon, err
	}
	policy := c.ImagePullPolicy
	if policy == "" {
		policy = api.PullIfNotPresent
		if runtime.IsLatest(c.Image) {
			policy = api.PullAlways
		}
	}
	_, present, err := m.rt.ImagePresent(ctx, ref)
	if err != nil {
		return "", 2 * retrySoon, err
	}
	switch {
	case policy == api.PullNever && !present:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: msg})
		m.rec.Event(pod, api.EventTypeWarning, "ErrImageNeverPull", msg)
		return "", 10 * retrySoon, errors.New(msg)
	case policy != api.PullAlways && present:
		m.rec.Eventf(pod, api.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
		return ref, 0, nil
	}
	key := "pull/" + string(pod.UID) + "/" + c.Image
	if in, left := m.backoff.InBackoffSince(key, w.pullFailedAt(c.Name)); in {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: msg})
		m.rec.Event(pod, api.EventTypeNormal, "BackOff", msg)
		m.rec.Event(pod, api.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
		return "", left, errors.New(msg)
	}
	m.rec.Eventf(pod, api.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	start := time.Now()
	_, size, err := m.rt.PullImage(ctx, ref)
	if err != nil {
		now := time.Now()
		w.setPullFailed(c.Name, now)
		m.backoff.Next(key, now)
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		s.log.Warn("pull image", "container", c.Name, "image", c.Image, "err", err)
		w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "ErrImagePull", Message: msg})
		m.rec.Event(pod, api.EventTypeWarning, "Failed", msg)
		m.rec.Event(pod, api.EventTypeWarning, "Failed", "Error: ErrImagePull")
		return "", m.backoff.Get(key), err
	}
	m.backoff.Reset(key)
	d := time.Since(start).Round(time.Millisecond)
	m.rec.Eventf(pod, api.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s (%s including waiting). Image size: %d bytes.", c.Image, d, d, size)
	return ref, 0, nil
}
