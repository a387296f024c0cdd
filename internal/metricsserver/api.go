package metricsserver

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
)

// Group and version served.
const (
	Group        = "metrics.k8s.io"
	Version      = "v1beta1"
	groupVersion = Group + "/" + Version
)

// RequestHeader is request-header authentication: a client certificate of
// CAs, with a common name of AllowedNames (any, if empty), vouches for the
// user in the username and group headers.
type RequestHeader struct {
	CAs          *x509.CertPool
	AllowedNames []string
	UserHeaders  []string
	GroupHeaders []string
}

// user returns the authenticated user, or "" when the request is not
// from an allowed front proxy.
func (rh *RequestHeader) user(r *http.Request) (string, []string) {
	if rh == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", nil
	}
	leaf := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: rh.CAs, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return "", nil
	}
	if len(rh.AllowedNames) > 0 && !slices.Contains(rh.AllowedNames, leaf.Subject.CommonName) {
		return "", nil
	}
	var name string
	for _, h := range rh.UserHeaders {
		if name = r.Header.Get(h); name != "" {
			break
		}
	}
	var groups []string
	for _, h := range rh.GroupHeaders {
		groups = append(groups, r.Header.Values(h)...)
	}
	return name, groups
}

// routes serves the health checks and, to authenticated callers, the
// metrics API.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	}
	apiMux := http.NewServeMux()
	apiMux.HandleFunc("GET /apis", s.serveGroupList)
	apiMux.HandleFunc("GET /apis/"+Group, s.serveGroup)
	apiMux.HandleFunc("GET /apis/"+groupVersion, s.serveResources)
	apiMux.HandleFunc("GET /apis/"+groupVersion+"/nodes", s.serveNodes)
	apiMux.HandleFunc("GET /apis/"+groupVersion+"/nodes/{name}", s.serveNodes)
	apiMux.HandleFunc("GET /apis/"+groupVersion+"/pods", s.servePods)
	apiMux.HandleFunc("GET /apis/"+groupVersion+"/namespaces/{namespace}/pods", s.servePods)
	apiMux.HandleFunc("GET /apis/"+groupVersion+"/namespaces/{namespace}/pods/{name}", s.servePods)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, _ := s.cfg.Authn.user(r); user == "" {
			writeStatus(w, http.StatusUnauthorized, api.StatusReasonUnauthorized, "Unauthorized", nil)
			return
		}
		apiMux.ServeHTTP(w, r)
	}))
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, code int, reason api.StatusReason, msg string, details *api.StatusDetails) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: api.StatusFailure,
		Message: msg, Reason: reason, Details: details, Code: int32(code)})
}

func (s *Server) serveGroupList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group()}})
}

func group() metav1.APIGroup {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion, Version: Version}
	return metav1.APIGroup{Name: Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
}

func (s *Server) serveGroup(w http.ResponseWriter, _ *http.Request) {
	g := group()
	g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	writeJSON(w, g)
}

func (s *Server) serveResources(w http.ResponseWriter, _ *http.Request) {
	verbs := metav1.Verbs{"get", "list"}
	writeJSON(w, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: groupVersion,
		APIResources: []metav1.APIResource{
			{Name: "nodes", SingularName: "", Namespaced: false, Kind: "NodeMetrics", Verbs: verbs},
			{Name: "pods", SingularName: "", Namespaced: true, Kind: "PodMetrics", Verbs: verbs},
		}})
}

// selector parses the labelSelector query; a bad one is a 400.
func selector(w http.ResponseWriter, r *http.Request) (labels.Selector, bool) {
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, api.StatusReasonBadRequest, err.Error(), nil)
		return nil, false
	}
	return sel, true
}

func (s *Server) serveNodes(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	now := metav1.NewTime(time.Now())
	if name != "" {
		n, err := s.nodes.Lister().Get(name)
		u, ok := s.store.node(name)
		if err != nil || !ok {
			writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("nodemetrics.metrics.k8s.io %q not found", name),
				&api.StatusDetails{Name: name, Group: Group, Kind: "nodemetrics"})
			return
		}
		m := nodeMetrics(n, u, now)
		writeJSON(w, m)
		return
	}
	sel, ok := selector(w, r)
	if !ok {
		return
	}
	list := metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: groupVersion}, Items: []metricsv1beta1.NodeMetrics{}}
	nodes := s.nodes.Lister().List(sel)
	slices.SortFunc(nodes, func(a, b *api.Node) int { return strings.Compare(a.Name, b.Name) })
	for _, n := range nodes {
		if u, ok := s.store.node(n.Name); ok {
			m := nodeMetrics(n, u, now)
			m.TypeMeta = metav1.TypeMeta{}
			list.Items = append(list.Items, m)
		}
	}
	writeJSON(w, list)
}

func nodeMetrics(n *api.Node, u usage, now metav1.Time) metricsv1beta1.NodeMetrics {
	return metricsv1beta1.NodeMetrics{TypeMeta: metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: groupVersion},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: now},
		Timestamp:  metav1.NewTime(u.timestamp.UTC()), Window: metav1.Duration{Duration: u.window.Round(time.Millisecond)},
		Usage: corev1.ResourceList{corev1.ResourceCPU: u.cpu, corev1.ResourceMemory: u.memory}}
}

func (s *Server) servePods(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	now := metav1.NewTime(time.Now())
	if name != "" {
		p, err := s.pods.Lister().Namespace(ns).Get(name)
		var m metricsv1beta1.PodMetrics
		ok := err == nil
		if ok {
			m, ok = s.podMetrics(p, now)
		}
		if !ok {
			writeStatus(w, http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("podmetrics.metrics.k8s.io %q not found", ns+"/"+name),
				&api.StatusDetails{Name: ns + "/" + name, Group: Group, Kind: "podmetrics"})
			return
		}
		writeJSON(w, m)
		return
	}
	sel, ok := selector(w, r)
	if !ok {
		return
	}
	var pods []*api.Pod
	if ns == "" {
		pods = s.pods.Lister().List(sel)
	} else {
		pods = s.pods.Lister().Namespace(ns).List(sel)
	}
	slices.SortFunc(pods, func(a, b *api.Pod) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	list := metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: groupVersion}, Items: []metricsv1beta1.PodMetrics{}}
	for _, p := range pods {
		if m, ok := s.podMetrics(p, now); ok {
			m.TypeMeta = metav1.TypeMeta{}
			list.Items = append(list.Items, m)
		}
	}
	writeJSON(w, list)
}

// podMetrics are a pod's containers' usage in spec order, with the
// earliest timestamp and widest window among them.
func (s *Server) podMetrics(p *api.Pod, now metav1.Time) (metricsv1beta1.PodMetrics, bool) {
	cs, ok := s.store.pod(p.Namespace, p.Name)
	if !ok {
		return metricsv1beta1.PodMetrics{}, false
	}
	m := metricsv1beta1.PodMetrics{TypeMeta: metav1.TypeMeta{Kind: "PodMetrics", APIVersion: groupVersion},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, CreationTimestamp: now}}
	var ts time.Time
	var window time.Duration
	names := make([]string, 0, len(cs))
	for _, c := range p.Spec.Containers {
		if _, ok := cs[c.Name]; ok {
			names = append(names, c.Name)
		}
	}
	for n := range cs {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		u := cs[n]
		if ts.IsZero() || u.timestamp.Before(ts) {
			ts = u.timestamp
		}
		window = max(window, u.window)
		m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: n,
			Usage: corev1.ResourceList{corev1.ResourceCPU: u.cpu, corev1.ResourceMemory: u.memory}})
	}
	m.Timestamp, m.Window = metav1.NewTime(ts.UTC()), metav1.Duration{Duration: window.Round(time.Millisecond)}
	return m, true
}
