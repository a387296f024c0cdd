package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/httpstream"
)

// serveAttach attaches a WebSocket session (the exec protocol without a
// command) to a running container's process. The terminal setting is the
// container's, as the kubelet's: a container without tty gets separate
// stdout and stderr. Stdin reaches only a container started with
// stdin: true; otherwise it is dropped, as containerd's CRI drops it.
func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	pod, container, ok := s.lookupContainer(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	opts := execOptions{Stdin: queryBool(q.Get("stdin")), Stdout: queryBool(q.Get("stdout")),
		Stderr: queryBool(q.Get("stderr")), TTY: containerSpec(pod, container).TTY}
	if !opts.Stdin && !opts.Stdout && !opts.Stderr {
		writeStatus(w, apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr"))
		return
	}
	if opts.TTY {
		opts.Stderr = false
	}
	if s.cfg.Attach == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusNotImplemented, api.StatusReasonInternalError, "attach is not supported by this kubelet"))
		return
	}
	s.serveRemoteCommand(w, r, pod, container, opts, func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, resize <-chan TerminalSize) api.Status {
		err := s.cfg.Attach.Attach(ctx, string(pod.UID), container, opts.TTY, stdin, stdout, stderr, resize)
		if err == nil {
			return api.Status{Status: api.StatusSuccess}
		}
		st := api.Status{Status: api.StatusFailure, Reason: api.StatusReasonInternalError, Code: http.StatusInternalServerError,
			Message: fmt.Sprintf("Internal error occurred: error attaching to container: %v", err)}
		if errors.Is(err, ErrContainerNotFound) {
			st.Reason, st.Code = api.StatusReasonNotFound, http.StatusNotFound
		}
		return st
	})
}

// containerSpec is the container named name of any kind.
func containerSpec(pod *api.Pod, name string) *api.Container {
	for _, cs := range [][]api.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return &pod.Spec.EphemeralContainers[i].Container
		}
	}
	return &api.Container{}
}

// servePortForward upgrades to SPDY (portforward.k8s.io) and connects each
// forwarded connection to 127.0.0.1:PORT in the pod's network namespace.
// The apiserver carries a client's WebSocket tunnel to this end as SPDY.
func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("pod")
	pod, ok := s.cfg.Pods.GetPodByName(ns, name)
	if !ok || pod == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("pod %q does not exist", ns+"/"+name)))
		return
	}
	if s.cfg.PortForward == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusNotImplemented, api.StatusReasonInternalError, "port-forward is not supported by this kubelet"))
		return
	}
	sandbox, dial, err := s.cfg.PortForward.PortForwardDialer(r.Context(), string(pod.UID))
	if err != nil {
		if errors.Is(err, ErrContainerNotFound) {
			writeStatus(w, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound, err.Error()))
			return
		}
		writeStatus(w, err)
		return
	}
	log := s.log.With("pod", ns+"/"+name)
	log.Debug("port-forward session")
	httpstream.ServePortForward(r.Context(), w, r, httpstream.PortForwardOptions{
		Dial: func(ctx context.Context, port uint16) (net.Conn, error) { return dial(ctx, port) },
		// The kubelet's words, with containerd's sandbox ID and no UID.
		ErrorPrefix: func(port uint16) string {
			return fmt.Sprintf("error forwarding port %d to pod %s, uid ", port, sandbox)
		},
		Logger: log,
	})
}
