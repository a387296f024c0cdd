package pods

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// lifecycleUserAgent is the User-Agent of the kubelet's HTTP lifecycle
// hooks (kube's "kube-lifecycle/MAJOR.MINOR").
const lifecycleUserAgent = "kube-lifecycle/1.37"

// minimumGrace is kube's minimumGracePeriodInSeconds: a container stopped
// after its preStop hook still gets this long.
const minimumGrace = 2 * time.Second

// runHook runs a postStart or preStop handler of container c (instance id)
// as kube's handlerRunner: exec in the container (a non-zero exit fails),
// an HTTP GET to the pod (any answer succeeds; an HTTPS hook answered in
// plain HTTP is retried in HTTP), or a sleep. The message is kube's.
func (m *Manager) runHook(ctx context.Context, pod *api.Pod, c *api.Container, id, podIP string, h *api.LifecycleHandler) (string, error) {
	switch {
	case h.Exec != nil:
		var out strings.Builder
		code, err := execAdapter{m.rt}.Exec(ctx, id, h.Exec.Command, &out, &out)
		if err == nil && code != 0 {
			err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), code, out.String())
		}
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, podDesc(pod), err, out.String()), err
		}
		return "", nil
	case h.HTTPGet != nil:
		if err := httpHook(ctx, h.HTTPGet, c, podIP); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
				h.HTTPGet.Path, c.Name, podDesc(pod), err), err
		}
		return "", nil
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
		case <-ctx.Done():
		}
		return "", nil
	}
	err := fmt.Errorf("invalid handler: %+v", *h)
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

// httpHook sends a hook's GET; the answer's status does not matter.
func httpHook(ctx context.Context, g *api.HTTPGetAction, c *api.Container, podIP string) error {
	if g.Host == "" && podIP == "" {
		return errors.New("failed to find networking container: the pod has no IP")
	}
	req, err := probes.NewHTTPGetRequest(ctx, g, c, podIP, lifecycleUserAgent)
	if err != nil {
		return err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	do := func(req *http.Request) error {
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		return resp.Body.Close()
	}
	err = do(req)
	if err != nil && req.URL.Scheme == "https" && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		plain := req.Clone(ctx)
		plain.URL.Scheme = "http"
		err = do(plain)
	}
	return err
}

// postStart runs c's postStart hook, if any, after instance id started; a
// failure is kube's: a FailedPostStartHook event, the container killed,
// and PostStartHookError as its waiting reason. False when it failed.
func (s *podSync) postStart(ctx context.Context, c *api.Container, id string) bool {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return true
	}
	m, pod := s.m, s.pod
	msg, err := m.runHook(ctx, pod, c, id, m.currentPodIP(pod, s.sb.PodIP), c.Lifecycle.PostStart)
	if err == nil {
		return true
	}
	s.log.Warn("postStart hook failed", "container", c.Name, "err", err)
	m.rec.Event(pod, api.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed")
	m.rec.Event(pod, api.EventTypeNormal, "Killing", "FailedPostStartHook")
	m.killContainer(ctx, pod, c, &runtime.Container{ID: id}, m.currentPodIP(pod, s.sb.PodIP), m.gracePeriod(pod))
	s.w.setWaiting(c.Name, &api.ContainerStateWaiting{Reason: "PostStartHookError", Message: msg})
	return false
}

// killContainer stops one running instance of spec as kube's
// killContainer: its preStop hook first, for at most the grace period, then
// the stop signal with what is left of it (at least minimumGrace). spec
// may be nil (a container no longer in the pod's spec).
func (m *Manager) killContainer(ctx context.Context, pod *api.Pod, spec *api.Container, inst *runtime.Container, podIP string, grace time.Duration) {
	if spec != nil && spec.Lifecycle != nil && spec.Lifecycle.PreStop != nil && grace > 0 {
		start := time.Now()
		hctx, cancel := context.WithTimeout(ctx, grace)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := m.runHook(hctx, pod, spec, inst.ID, podIP, spec.Lifecycle.PreStop); err != nil {
				m.log.Warn("preStop hook failed", "pod", pod.Namespace+"/"+pod.Name, "container", spec.Name, "err", err)
				m.rec.Event(pod, api.EventTypeWarning, "FailedPreStopHook", "PreStopHook failed")
			}
		}()
		<-done
		cancel()
		grace -= time.Since(start)
		if grace < minimumGrace {
			grace = minimumGrace
		}
	}
	if err := m.rt.StopContainer(ctx, inst.ID, grace); err != nil {
		m.log.Warn("stop container", "pod", pod.Namespace+"/"+pod.Name, "container", inst.Name, "id", inst.ID, "err", err)
	}
}

// containerSpec is the spec of the pod's (init or app) container name.
func containerSpec(pod *api.Pod, name string, init bool) *api.Container {
	list := pod.Spec.Containers
	if init {
		list = pod.Spec.InitContainers
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	if !init {
		for i := range pod.Spec.EphemeralContainers {
			if pod.Spec.EphemeralContainers[i].Name == name {
				return &pod.Spec.EphemeralContainers[i].Container
			}
		}
	}
	return nil
}
