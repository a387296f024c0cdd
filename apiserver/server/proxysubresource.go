package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/apiserver/proxy"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// isProxySubresource tells pods/NAME/proxy, services/NAME/proxy and
// nodes/NAME/proxy, each with or without a path after it.
func isProxySubresource(st *registry.Store, info *request.Info) bool {
	return info.Subresource == "proxy" && st.Info.Group == "" && st.Info.HasSubresource("proxy")
}

// serveProxySubresource proxies a request to pods/NAME/proxy/PATH,
// services/NAME/proxy/PATH or nodes/NAME/proxy/PATH (NAME possibly
// "name:port" or "scheme:name:port") to PATH on the pod, a pod of the
// Service, or the node's kubelet, as kube-apiserver's ProxyREST: a
// CONNECT, admitted with the path as its options before the object is
// looked up; authorization already happened in the filter chain with
// the method's verb (get, create, update, patch, delete).
func (s *Server) serveProxySubresource(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions:
	default:
		methodNotAllowed(w, r)
		return
	}
	if _, ok := r.URL.Query()["dryRun"]; ok {
		writeError(w, r, apierrors.NewBadRequest("dryRun is not supported"))
		return
	}
	sub := proxy.SubPath(info.Parts, r.URL.Path)
	meta := api.TypeMeta{APIVersion: "v1", Kind: st.Info.Kind + "ProxyOptions"}
	var opts api.Object
	switch st.Info.Resource {
	case "pods":
		opts = &api.PodProxyOptions{TypeMeta: meta, Path: sub}
	case "services":
		opts = &api.ServiceProxyOptions{TypeMeta: meta, Path: sub}
	case "nodes":
		opts = &api.NodeProxyOptions{TypeMeta: meta, Path: sub}
	default:
		notFound(w, r)
		return
	}
	ctx := r.Context()
	if err := st.AdmitConnect(ctx, "proxy", info.Namespace, info.Name, opts); err != nil {
		writeError(w, r, err)
		return
	}
	// Admission may have changed the path: what was admitted is what is
	// proxied.
	switch o := opts.(type) {
	case *api.PodProxyOptions:
		sub = o.Path
	case *api.ServiceProxyOptions:
		sub = o.Path
	case *api.NodeProxyOptions:
		sub = o.Path
	}
	var (
		loc *urlLocation
		err error
	)
	switch st.Info.Resource {
	case "pods":
		loc, err = s.podProxyLocation(ctx, st, info.Namespace, info.Name)
	case "services":
		loc, err = s.serviceProxyLocation(ctx, info.Namespace, info.Name)
	case "nodes":
		loc, err = s.nodeProxyLocation(ctx, info.Name)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	loc.url.Path = proxy.JoinPreservingTrailingSlash(loc.url.Path, sub)
	h := &proxy.Handler{Location: loc.url, Transport: loc.rt, Responder: writeProxyError, Log: s.log}
	h.ServeHTTP(w, r)
}

// writeProxyError answers a failed proxy request: a Status error as it
// is, any other error as kube-apiserver answers one a handler returns (a
// 500 without reason, the error's text as the message).
func writeProxyError(w http.ResponseWriter, r *http.Request, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		err = apierrors.NewGeneric(http.StatusInternalServerError, api.StatusReasonUnknown, err.Error())
	}
	writeError(w, r, err)
}

// podProxyLocation is where pods/ID/proxy goes (proxy.PodLocation).
func (s *Server) podProxyLocation(ctx context.Context, st *registry.Store, ns, id string) (*urlLocation, error) {
	scheme, name, port, ok := proxy.SplitSchemeNamePort(id)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	obj, err := getByName(ctx, st, ns, name)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*api.Pod)
	if !ok {
		return nil, fmt.Errorf("pods store returned %T", obj)
	}
	u, err := proxy.PodLocation(pod, scheme, port)
	if err != nil {
		return nil, err
	}
	return &urlLocation{url: u, rt: s.proxy.podTransport()}, nil
}

// serviceProxyLocation is where services/ID/proxy goes
// (proxy.ServiceLocation).
func (s *Server) serviceProxyLocation(ctx context.Context, ns, id string) (*urlLocation, error) {
	u, err := proxy.ServiceLocation(ctx, storeServiceSource{s}, ns, id, api.IPv4Protocol)
	if err != nil {
		return nil, err
	}
	return &urlLocation{url: u, rt: s.proxy.podTransport()}, nil
}

// nodeProxyLocation is where nodes/ID/proxy goes: the node's kubelet
// over the kubelet transport (the apiserver's client certificate,
// --kubelet-certificate-authority), or another port of the node.
func (s *Server) nodeProxyLocation(ctx context.Context, id string) (*urlLocation, error) {
	scheme, name, port, ok := proxy.SplitSchemeNamePort(id)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	if err := validName(name); err != nil {
		return nil, err
	}
	host, kport, err := s.kubeletAddress(ctx, name)
	if err != nil {
		return nil, err
	}
	rt, err := s.proxy.rt()
	if err != nil {
		return nil, err
	}
	k := proxy.Kubelet{Scheme: "https", Host: host, Port: strconv.Itoa(kport), Transport: rt}
	u, t, err := proxy.NodeLocation(ctx, k, scheme, port, s.proxy.podTransport())
	if err != nil {
		return nil, err
	}
	return &urlLocation{url: u, rt: t}, nil
}

// urlLocation is a proxy request's backend and the transport to it.
type urlLocation struct {
	url *url.URL
	rt  http.RoundTripper
}

// storeServiceSource reads Services, EndpointSlices and pods from the
// apiserver's stores for proxy.ServiceLocation.
type storeServiceSource struct{ s *Server }

var _ proxy.ServiceSource = storeServiceSource{}

func (src storeServiceSource) get(ctx context.Context, key, ns, name string) (api.Object, error) {
	st := src.s.stores[key]
	if st == nil {
		return nil, fmt.Errorf("%s is not served", key)
	}
	return getByName(ctx, st, ns, name)
}

// getByName reads ns/name, refusing a name that cannot be a path segment
// as kube-apiserver's store does (the proxy's name comes from splitting
// "scheme:name:port", after the request's own checks).
func getByName(ctx context.Context, st *registry.Store, ns, name string) (api.Object, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	return st.Get(ctx, ns, name)
}

func validName(name string) error {
	if msgs := naming.IsValidPathSegmentName(name); len(msgs) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, strings.Join(msgs, ";")))
	}
	return nil
}

func (src storeServiceSource) Service(ctx context.Context, ns, name string) (*api.Service, error) {
	obj, err := src.get(ctx, "/services", ns, name)
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*api.Service)
	if !ok {
		return nil, fmt.Errorf("services store returned %T", obj)
	}
	return svc, nil
}

func (src storeServiceSource) Pod(ctx context.Context, ns, name string) (*api.Pod, error) {
	obj, err := src.get(ctx, "/pods", ns, name)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*api.Pod)
	if !ok {
		return nil, fmt.Errorf("pods store returned %T", obj)
	}
	return pod, nil
}

// EndpointSlices reads the watch cache (resourceVersion 0), as kube's
// proxy reads an informer's.
func (src storeServiceSource) EndpointSlices(ctx context.Context, ns, name string) ([]*api.EndpointSlice, error) {
	st := src.s.stores["discovery.k8s.io/endpointslices"]
	if st == nil {
		return nil, errors.New("endpointslices are not served")
	}
	res, err := st.List(ctx, ns, registry.ListOptions{
		Labels:          labels.SelectorFromSet(labels.Set{api.LabelServiceName: name}),
		ResourceVersion: "0",
	})
	if err != nil {
		return nil, err
	}
	out := make([]*api.EndpointSlice, 0, len(res.Items))
	for _, it := range res.Items {
		if es, ok := it.Object.(*api.EndpointSlice); ok {
			out = append(out, es)
		}
	}
	return out, nil
}
