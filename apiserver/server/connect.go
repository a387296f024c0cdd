package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// admitConnect is the one admission call of a CONNECT (pods/NAME/exec,
// attach, portforward), made as kube-apiserver's ConnectResource makes
// it: after the options are decoded from the query and before anything
// else, the pod's lookup included, with the options as the object
// (webhooks receive them as request.object, policies as object). The
// options it returns, possibly changed by mutating admission, are what
// the kubelet is asked for: what was admitted is what runs.
func (s *Server) admitConnect(r *http.Request, info *request.Info, st *registry.Store) (api.Object, error) {
	if _, ok := r.URL.Query()["dryRun"]; ok {
		return nil, apierrors.NewBadRequest("dryRun is not supported")
	}
	opts, err := connectOptions(info.Subresource, r.URL.Query())
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := st.AdmitConnect(r.Context(), info.Subresource, info.Namespace, info.Name, opts); err != nil {
		return nil, err
	}
	return opts, nil
}

// connectOptions decodes the query of a CONNECT to pods/NAME/SUB as
// kube-apiserver's parameter codec does: a boolean is false only when
// absent, "false" or "0"; ports are comma-separated 16-bit numbers.
func connectOptions(sub string, q url.Values) (api.Object, error) {
	flag := func(k string) bool {
		v, ok := q[k]
		return ok && len(v) > 0 && v[0] != "0" && !strings.EqualFold(v[0], "false")
	}
	meta := func(kind string) api.TypeMeta { return api.TypeMeta{APIVersion: "v1", Kind: kind} }
	switch sub {
	case "exec":
		return &api.PodExecOptions{TypeMeta: meta("PodExecOptions"), Stdin: flag("stdin"), Stdout: flag("stdout"),
			Stderr: flag("stderr"), TTY: flag("tty"), Container: q.Get("container"), Command: q["command"]}, nil
	case "attach":
		return &api.PodAttachOptions{TypeMeta: meta("PodAttachOptions"), Stdin: flag("stdin"), Stdout: flag("stdout"),
			Stderr: flag("stderr"), TTY: flag("tty"), Container: q.Get("container")}, nil
	case "portforward":
		o := &api.PodPortForwardOptions{TypeMeta: meta("PodPortForwardOptions")}
		for _, v := range q["ports"] {
			for _, p := range strings.Split(v, ",") {
				n, err := strconv.ParseUint(p, 10, 16)
				if err != nil {
					return nil, fmt.Errorf("cannot convert to []int32: %w", err)
				}
				o.Ports = append(o.Ports, int32(n))
			}
		}
		return o, nil
	}
	return nil, fmt.Errorf("%s is not a connect subresource", sub)
}

// streamQuery is the kubelet's query for exec and attach options, built
// from the admitted options (kube-apiserver's streamParams) rather than
// passed on from the client's query, whose spelling the kubelet might
// read otherwise than admission did.
func streamQuery(stdin, stdout, stderr, tty bool, command []string) url.Values {
	q := url.Values{}
	for _, f := range []struct {
		key string
		on  bool
	}{{"stdin", stdin}, {"stdout", stdout}, {"stderr", stderr}, {"tty", tty}} {
		if f.on {
			q.Set(f.key, "true")
		}
	}
	for _, c := range command {
		q.Add("command", c)
	}
	return q
}
