package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/proxy"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// DefaultKubeletPort is the kubelet port used when a Node does not report
// status.daemonEndpoints.kubeletEndpoint.Port.
const DefaultKubeletPort = 10250

// DefaultKubeletPreferredAddressTypes is the order in which a Node's
// addresses are tried to reach its kubelet (--kubelet-preferred-address-types).
var DefaultKubeletPreferredAddressTypes = []api.NodeAddressType{api.NodeInternalIP, api.NodeHostName}

// KubeletConfig says how the apiserver reaches kubelets for pods/log, exec,
// attach and portforward.
type KubeletConfig struct {
	// TLS carries the apiserver's kubelet client certificate
	// (Certificates or GetClientCertificate) and, in RootCAs, the CA of
	// --kubelet-certificate-authority: the kubelet's serving certificate
	// must chain to it and be valid for the address dialled. Without
	// RootCAs it is not verified, as kube-apiserver without the flag.
	TLS *tls.Config
	// VerifyKubelets says --kubelet-certificate-authority is set: until
	// TLS.RootCAs holds its CA, kubelet requests answer 500 rather than
	// go unverified.
	VerifyKubelets bool
	// PreferredAddressTypes orders a Node's addresses (default InternalIP, Hostname).
	PreferredAddressTypes []api.NodeAddressType
	// DialTimeout bounds connecting to a kubelet (default 10 s).
	DialTimeout time.Duration
	// Authorizer, when set, makes a WebSocket exec, attach or port-forward
	// (a GET, authorized as "get" by the filter chain) also need "create"
	// on the subresource, as kube-apiserver 1.35 does
	// (AuthorizePodWebsocketUpgradeCreatePermission).
	Authorizer authz.Authorizer
}

// kubeletProxy streams pods/log, exec, attach and portforward to the pod's kubelet.
// It also holds the transport of the proxy subresources to pods and
// services (proxysubresource.go).
type kubeletProxy struct {
	cfg                 KubeletConfig
	mu                  sync.Mutex
	transport, insecure *http.Transport
	pods                *http.Transport
}

// podTransport is the transport to pods and services (proxy.NewTransport),
// made on first use.
func (p *kubeletProxy) podTransport() *http.Transport {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pods == nil {
		p.pods = proxy.NewTransport()
	}
	return p.pods
}

// errKubeletCANotLoaded answers a kubelet request while
// --kubelet-certificate-authority is set but its CA is not loaded yet:
// dialling without verification would hand the client's exec or logs to
// whoever answers at the node's address.
var errKubeletCANotLoaded = apierrors.NewInternalError(errors.New(
	"kubelet certificate authority (--kubelet-certificate-authority) is not loaded: kubelet serving certificates cannot be verified"))

// rt is the transport to kubelets: their serving certificates are checked
// against TLS.RootCAs (--kubelet-certificate-authority) for the address
// dialled, or not at all without the flag, as kube-apiserver does. With
// the flag and no CA loaded yet it fails (errKubeletCANotLoaded).
func (p *kubeletProxy) rt() (*http.Transport, error) {
	if err := p.init(); err != nil {
		return nil, err
	}
	return p.transport, nil
}

// insecureRT never verifies the kubelet's certificate: pods/log with
// insecureSkipTLSVerifyBackend=true (kube's InsecureSkipTLSVerifyTransport).
func (p *kubeletProxy) insecureRT() (*http.Transport, error) {
	if err := p.init(); err != nil {
		return nil, err
	}
	return p.insecure, nil
}

// init builds the transports on first use, once the CA is there when
// VerifyKubelets asks for it (until then it fails and is tried again).
func (p *kubeletProxy) init() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.transport != nil {
		return nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.cfg.TLS != nil {
		tc = p.cfg.TLS.Clone()
	}
	if p.cfg.VerifyKubelets && tc.RootCAs == nil {
		return errKubeletCANotLoaded
	}
	// HTTP/1.1 only: upgrades (exec over WebSocket) do not exist in HTTP/2.
	tc.NextProtos = []string{"http/1.1"}
	insecure := tc.Clone()
	insecure.InsecureSkipVerify = true        //nolint:gosec // asked for by the client (insecureSkipTLSVerifyBackend)
	tc.InsecureSkipVerify = tc.RootCAs == nil //nolint:gosec // no --kubelet-certificate-authority: as Kubernetes, not verified
	timeout := p.cfg.DialTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	transport := func(tc *tls.Config) *http.Transport {
		return &http.Transport{
			DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:       tc,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: time.Minute,
			MaxIdleConnsPerHost:   10,
			IdleConnTimeout:       90 * time.Second,
		}
	}
	p.transport, p.insecure = transport(tc), transport(insecure)
	return nil
}

// isKubeletSubresource tells the pod subresources served by the kubelet.
func isKubeletSubresource(st *registry.Store, sub string) bool {
	return st.Info.Group == "" && st.Info.Resource == "pods" && (sub == "log" || sub == "exec" || sub == "attach" || sub == "portforward")
}

// servePodProxy handles GET pods/NAME/log and GET/POST pods/NAME/exec,
// attach and portforward: it finds the pod's node and its kubelet's
// address and port, and streams the kubelet's /containerLogs, /exec,
// /attach or /portForward back (a WebSocket port-forward is tunneled to
// the kubelet's SPDY: streamtunnel.go). Authorization already happened in
// the filter chain: get pods/log, and get or create on the others; exec,
// attach and portforward are CONNECTs, admitted first (admitConnect).
func (s *Server) servePodProxy(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	switch {
	case info.Subresource == "log" && info.Verb != "get":
		methodNotAllowed(w, r)
		return
	case info.Subresource != "log" && info.Verb != "get" && info.Verb != "create":
		methodNotAllowed(w, r)
		return
	}
	var opts api.Object
	if info.Subresource != "log" {
		var err error
		if opts, err = s.admitConnect(r, info, st); err != nil {
			writeError(w, r, err)
			return
		}
		// After admission, as kube's Connect checks it.
		if info.Verb == "get" {
			if err := s.authorizeCreate(r, info); err != nil {
				writeError(w, r, err)
				return
			}
		}
	}
	q := r.URL.Query()
	obj, err := st.Get(r.Context(), info.Namespace, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	pod, ok := obj.(*api.Pod)
	if !ok {
		writeError(w, r, fmt.Errorf("pods store returned %T", obj))
		return
	}
	var container string
	switch o := opts.(type) {
	case nil:
		container, err = podContainer(pod, q.Get("container"), true)
	case *api.PodExecOptions:
		container, err = podContainer(pod, o.Container, false)
	case *api.PodAttachOptions:
		container, err = podContainer(pod, o.Container, false)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	base, err := s.kubeletURL(r, pod)
	if err != nil {
		writeError(w, r, err)
		return
	}
	seg := url.PathEscape
	switch info.Subresource {
	case "log":
		kq, err := logQuery(q)
		if err != nil {
			writeError(w, r, err)
			return
		}
		base.Path = "/containerLogs/" + seg(pod.Namespace) + "/" + seg(pod.Name) + "/" + seg(container)
		base.RawQuery = kq.Encode()
		get := s.proxy.rt
		if parseBool(q.Get("insecureSkipTLSVerifyBackend")) {
			get = s.proxy.insecureRT
		}
		rt, err := get()
		if err != nil {
			writeError(w, r, err)
			return
		}
		s.streamLog(w, r, base, rt)
	case "exec":
		o := opts.(*api.PodExecOptions)
		if len(o.Command) == 0 {
			writeError(w, r, apierrors.NewBadRequest("you must specify at least 1 command"))
			return
		}
		base.Path = "/exec/" + seg(pod.Namespace) + "/" + seg(pod.Name) + "/" + seg(container)
		base.RawQuery = streamQuery(o.Stdin, o.Stdout, o.Stderr, o.TTY, o.Command).Encode()
		s.proxyUpgrade(w, r, base)
	case "attach":
		o := opts.(*api.PodAttachOptions)
		base.Path = "/attach/" + seg(pod.Namespace) + "/" + seg(pod.Name) + "/" + seg(container)
		base.RawQuery = streamQuery(o.Stdin, o.Stdout, o.Stderr, o.TTY, nil).Encode()
		s.proxyUpgrade(w, r, base)
	case "portforward":
		base.Path = "/portForward/" + seg(pod.Namespace) + "/" + seg(pod.Name)
		if isTunnelRequest(r) {
			s.tunnelPortForward(w, r, base)
			return
		}
		s.proxyUpgrade(w, r, base)
	}
}

// authorizeCreate checks "create" on the subresource for a request that
// came as a GET.
func (s *Server) authorizeCreate(r *http.Request, info *request.Info) error {
	a := s.cfg.Kubelet.Authorizer
	if a == nil {
		return nil
	}
	user, ok := request.UserFrom(r.Context())
	if !ok {
		return errors.New("no User found in the context")
	}
	attrs := authz.AttributesFrom(info, user)
	attrs.Verb = "create"
	decision, reason, err := a.Authorize(r.Context(), attrs)
	switch {
	case decision == authz.Allow:
		return nil
	case err != nil:
		return err
	}
	return authz.Forbidden(attrs, reason)
}

// podContainer resolves the container a request addresses, with
// kube-apiserver's defaulting and messages.
func podContainer(pod *api.Pod, name string, allowInit bool) (string, error) {
	names := func(cs []api.Container) []string {
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	if name == "" {
		if len(pod.Spec.Containers) == 1 {
			return pod.Spec.Containers[0].Name, nil
		}
		msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names(pod.Spec.Containers))
		if allowInit && len(pod.Spec.InitContainers) > 0 {
			msg += fmt.Sprintf(" or one of the init containers: %v", names(pod.Spec.InitContainers))
		}
		return "", apierrors.NewBadRequest(msg)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// logQuery validates PodLogOptions and maps them to the kubelet's query.
func logQuery(q url.Values) (url.Values, error) {
	out := url.Values{}
	for _, k := range []string{"follow", "previous", "timestamps", "insecureSkipTLSVerifyBackend"} {
		if v := q.Get(k); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: must be a boolean", v, k))
			}
			// As kube's LogLocation: set only when true; the TLS choice
			// is the apiserver's, not a kubelet parameter.
			if b && k != "insecureSkipTLSVerifyBackend" {
				out.Set(k, "true")
			}
		}
	}
	ints := []struct {
		key string
		min int64
	}{{"tailLines", 0}, {"limitBytes", 1}, {"sinceSeconds", 1}}
	for _, p := range ints {
		v := q.Get(p.key)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < p.min {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: must be an integer greater than or equal to %d", v, p.key, p.min))
		}
		out.Set(p.key, v)
	}
	if v := q.Get("sinceTime"); v != "" {
		if q.Get("sinceSeconds") != "" {
			return nil, apierrors.NewBadRequest("at most one of sinceTime or sinceSeconds may be specified")
		}
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for sinceTime: must be an RFC3339 time", v))
		}
		out.Set("sinceTime", v)
	}
	return out, nil
}

// kubeletURL is https://ADDRESS:PORT of the pod's node's kubelet.
func (s *Server) kubeletURL(r *http.Request, pod *api.Pod) (*url.URL, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	host, port, err := s.kubeletAddress(r.Context(), pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// kubeletAddress is the address and port of node's kubelet: its first
// address of a preferred type and the port it reports (kube's
// NodeConnectionInfoGetter).
func (s *Server) kubeletAddress(ctx context.Context, node string) (string, int, error) {
	nodes := s.stores["/nodes"]
	if nodes == nil {
		return "", 0, errors.New("the nodes resource is not served")
	}
	obj, err := nodes.Get(ctx, "", node)
	if err != nil {
		return "", 0, err
	}
	n, ok := obj.(*api.Node)
	if !ok {
		return "", 0, fmt.Errorf("nodes store returned %T", obj)
	}
	host, err := preferredAddress(n, s.cfg.Kubelet.PreferredAddressTypes)
	if err != nil {
		return "", 0, err
	}
	port := int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = DefaultKubeletPort
	}
	return host, port, nil
}

// preferredAddress is the node's first address of the first preferred type
// it has (kube-apiserver's GetPreferredNodeAddress).
func preferredAddress(node *api.Node, types []api.NodeAddressType) (string, error) {
	if len(types) == 0 {
		types = DefaultKubeletPreferredAddressTypes
	}
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address, nil
			}
		}
	}
	// kube's NoMatchError is no Status error: a 500 without reason.
	return "", apierrors.NewGeneric(http.StatusInternalServerError, api.StatusReasonUnknown,
		fmt.Sprintf("no preferred addresses found; known addresses: %v", node.Status.Addresses))
}

// streamLog copies the kubelet's log response, flushing as it arrives so
// follow streams reach the client line by line. The request's context
// ends the stream when the client goes away.
func (s *Server) streamLog(w http.ResponseWriter, r *http.Request, u *url.URL, rt http.RoundTripper) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		// kube-apiserver's LocationStreamer: the http.Client's error
		// (`Get "URL": ...`), a 500 without reason.
		writeError(w, r, apierrors.NewGeneric(http.StatusInternalServerError, api.StatusReasonUnknown,
			(&url.Error{Op: "Get", URL: u.String(), Err: err}).Error()))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		relayKubeletError(w, r, resp)
		return
	}
	if isLogWebSocket(r) {
		streamLogWebSocket(w, r, resp.Body)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	buf := make([]byte, 32*1024)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if rerr != nil {
			return
		}
	}
}

// relayKubeletError passes the kubelet's refusal on as a Status.
func relayKubeletError(w http.ResponseWriter, r *http.Request, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var st api.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		writeJSON(w, r, resp.StatusCode, st)
		return
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = resp.Status
	}
	writeError(w, r, apierrors.NewGeneric(int32(resp.StatusCode), apierrors.ReasonForCode(resp.StatusCode, r.Method), msg))
}

func kubeletUnreachable(u *url.URL, err error) error {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return err
	}
	// kube-apiserver's answer when the kubelet cannot be reached or its
	// certificate is refused (the upgrade-aware proxy's dial error, a 500
	// without reason).
	return apierrors.NewGeneric(http.StatusInternalServerError, api.StatusReasonUnknown,
		fmt.Sprintf("error dialing backend: %v", err))
}

// proxyUpgrade forwards an exec request, WebSocket upgrade included, to the
// kubelet and splices the two connections once the kubelet accepts.
func (s *Server) proxyUpgrade(w http.ResponseWriter, r *http.Request, u *url.URL) {
	rt, err := s.proxy.rt()
	if err != nil {
		writeError(w, r, err)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = u
			pr.Out.Host = u.Host
			// The client's credentials are for the apiserver, not the kubelet:
			// the apiserver speaks for itself with its client certificate.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Impersonate-User")
			pr.Out.Header.Del("Impersonate-Group")
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorLog:      nil,
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode < 300 {
				return nil
			}
			// Turn a kubelet refusal into a Status of the same code.
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			var st api.Status
			if json.Unmarshal(body, &st) != nil || st.Kind != "Status" {
				msg := strings.TrimSpace(string(body))
				if msg == "" {
					msg = resp.Status
				}
				st = apierrors.NewGeneric(int32(resp.StatusCode), apierrors.ReasonForCode(resp.StatusCode, r.Method), msg).Status()
				body, _ = json.Marshal(st)
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			resp.Header.Set("Content-Type", "application/json")
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.log.Warn("exec proxy to kubelet failed", "kubelet", u.Host, "err", err)
			writeError(w, r, kubeletUnreachable(u, err))
		},
	}
	rp.ServeHTTP(w, r)
}
