package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/daemon"
)

// Defaults of the kubelet's server flags.
const (
	DefaultPort       = 10250
	DefaultPodLogsDir = "/var/log/pods"
	// APIServerKubeletClientUser is the user of the apiserver's kubelet
	// client certificate (kubeadm's apiserver-kubelet-client).
	APIServerKubeletClientUser = "kube-apiserver-kubelet-client"
	mastersGroup               = "system:masters"
	authenticatedGroup         = "system:authenticated"
)

// Config assembles a Server.
type Config struct {
	// Addr is the listen address, "0.0.0.0:10250" (--address, --port).
	Addr string
	// Certificate is the serving certificate (bootstrap.EnsureServingCert).
	Certificate tls.Certificate
	// GetCertificate, when set, replaces Certificate: the certificate of
	// each handshake, so a rotated one is served without a restart
	// (bootstrap.ServingManager with --rotate-server-certificates).
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// ClientCAs verify client certificates (--client-ca-file, default the
	// cluster CA of the kubeconfig).
	ClientCAs *x509.CertPool
	// AllowedUsers may use the API besides members of system:masters
	// (default: kube-apiserver-kubelet-client).
	AllowedUsers []string
	// PodLogsDir holds the containers' CRI log files (default /var/log/pods).
	PodLogsDir string
	// NodeLogsDir is served as files at /logs/ (default /var/log), as the
	// kubelet's log server: the node's logs, read through the apiserver's
	// nodes/NAME/proxy/logs/.
	NodeLogsDir string
	// Pods finds the pods the kubelet runs; Exec runs commands in them,
	// Attach attaches to their containers, PortForward reaches their ports.
	Pods        PodLookup
	Exec        Executor
	Attach      Attacher
	PortForward PortForwarder
	// Stats measures the node and its pods for /stats/summary and
	// /metrics/resource; nil serves them as 503.
	Stats StatsProvider
	// Metrics serves the kubelet's own /metrics, authorized as
	// nodes/metrics as in Kubernetes; nil serves none.
	Metrics http.Handler
	// Tokens authenticates bearer tokens (a ServiceAccount's, say) when
	// no client certificate does, as the kubelet's webhook token
	// authentication; nil accepts client certificates only.
	Tokens TokenAuthenticator
	// Authorizer decides the requests of users the fixed rule (masters,
	// AllowedUsers) does not admit, as the kubelet's webhook authorization
	// does; nil refuses them.
	Authorizer Authorizer
	// FollowPoll is how often a followed log is checked for more (default 250 ms).
	FollowPoll time.Duration
	Logger     *slog.Logger
}

// Server is the kubelet's HTTPS API.
type Server struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.ClientCAs == nil {
		return nil, errors.New("kubelet server: a client CA is required to authenticate the apiserver")
	}
	if cfg.Pods == nil {
		return nil, errors.New("kubelet server: a pod lookup is required")
	}
	if cfg.Addr == "" {
		cfg.Addr = net.JoinHostPort("0.0.0.0", strconv.Itoa(DefaultPort))
	}
	if cfg.PodLogsDir == "" {
		cfg.PodLogsDir = DefaultPodLogsDir
	}
	if cfg.NodeLogsDir == "" {
		cfg.NodeLogsDir = "/var/log"
	}
	if len(cfg.AllowedUsers) == 0 {
		cfg.AllowedUsers = []string{APIServerKubeletClientUser}
	}
	if cfg.FollowPoll <= 0 {
		cfg.FollowPoll = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	mux := http.NewServeMux()
	// /healthz on this port is authorized as kube's kubelet does it
	// (nodes/healthz, or nodes/proxy); the plain health port answers anyone.
	mux.Handle("GET /healthz", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })))
	mux.Handle("GET /pods", s.authorized(http.HandlerFunc(s.servePods)))
	mux.Handle("GET /containerLogs/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.serveContainerLogs)))
	mux.Handle("GET /exec/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.serveExec)))
	mux.Handle("POST /exec/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.serveExec)))
	mux.Handle("GET /attach/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.serveAttach)))
	mux.Handle("POST /attach/{namespace}/{pod}/{container}", s.authorized(http.HandlerFunc(s.serveAttach)))
	mux.Handle("GET /portForward/{namespace}/{pod}", s.authorized(http.HandlerFunc(s.servePortForward)))
	mux.Handle("POST /portForward/{namespace}/{pod}", s.authorized(http.HandlerFunc(s.servePortForward)))
	mux.Handle("GET /logs/", s.authorized(http.StripPrefix("/logs/", http.FileServer(http.Dir(cfg.NodeLogsDir)))))
	mux.Handle("GET /stats/summary", s.authorized(http.HandlerFunc(s.serveStatsSummary)))
	mux.Handle("GET /metrics/resource", s.authorized(http.HandlerFunc(s.serveResourceMetrics)))
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.authorized(cfg.Metrics))
	}
	s.handler = mux
	return s, nil
}

// Handler is the HTTP handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.handler }

// TLSConfig is the server side of TLS: the serving certificate, and client
// certificates requested and verified against ClientCAs when given.
func (s *Server) TLSConfig() *tls.Config {
	c := &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs:  s.cfg.ClientCAs,
		NextProtos: []string{"http/1.1"},
	}
	if s.cfg.GetCertificate != nil {
		c.GetCertificate = s.cfg.GetCertificate
	} else {
		c.Certificates = []tls.Certificate{s.cfg.Certificate}
	}
	return c
}

// Run listens on Addr (or serves the socket inherited for it, see
// daemon.Listen) until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	l, err := daemon.Listen(s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("kubelet server: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve serves HTTPS on l until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := daemon.NewHTTPServer(s.handler)
	srv.TLSConfig = s.TLSConfig()
	srv.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	// Requests live no longer than the server: upgraded sessions (exec,
	// attach, port-forward) are hijacked and Shutdown does not see them.
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(l, "", "") }()
	s.log.Info("kubelet server listening", "address", l.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("kubelet server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = srv.Close() // follow streams and exec sessions do not end by themselves
	return nil
}

// user is an authenticated client.
type user struct {
	name   string
	groups []string
}

// authenticate returns the user of a verified client certificate or,
// without one, of a bearer token Tokens vouches for; every authenticated
// user is in system:authenticated, as kube adds it. A certificate or
// token that fails is 401, never anonymous: the kubelet does not serve
// anonymous requests (kube's config-file default).
func (s *Server) authenticate(r *http.Request) (*user, bool) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		if u, ok := s.certificateUser(r.TLS.PeerCertificates); ok {
			return u, true
		}
	}
	if s.cfg.Tokens == nil {
		return nil, false
	}
	token, ok := bearerToken(r)
	if !ok {
		return nil, false
	}
	name, groups, err := s.cfg.Tokens.AuthenticateToken(r.Context(), token)
	if err != nil {
		s.log.Debug("bearer token refused", "path", r.URL.Path, "err", err)
		return nil, false
	}
	// What the kubelet proxies or runs never sees the token.
	r.Header.Del("Authorization")
	return &user{name: name, groups: withAuthenticated(groups)}, true
}

// certificateUser verifies a client certificate chain against ClientCAs:
// CN is the user, each O a group.
func (s *Server) certificateUser(chain []*x509.Certificate) (*user, bool) {
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: s.cfg.ClientCAs, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, false
	}
	if leaf.Subject.CommonName == "" {
		return nil, false
	}
	return &user{name: leaf.Subject.CommonName, groups: withAuthenticated(leaf.Subject.Organization)}, true
}

// bearerToken is the token of "Authorization: Bearer TOKEN".
func bearerToken(r *http.Request) (string, bool) {
	parts := strings.Fields(r.Header.Get("Authorization"))
	if len(parts) != 2 || !strings.EqualFold(parts[0], "bearer") {
		return "", false
	}
	return parts[1], true
}

// withAuthenticated adds system:authenticated to the groups.
func withAuthenticated(groups []string) []string {
	if slices.Contains(groups, authenticatedGroup) {
		return groups
	}
	return append(slices.Clone(groups), authenticatedGroup)
}

// authorized admits members of system:masters and AllowedUsers, and asks
// Authorizer about the others with the attributes Kubernetes' kubelet
// gives a request (resource nodes, subresource stats, metrics, log or
// proxy by path; verb get, or create for POST and the streaming
// endpoints).
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.authenticate(r)
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if slices.Contains(u.groups, mastersGroup) || slices.Contains(s.cfg.AllowedUsers, u.name) {
			next.ServeHTTP(w, r)
			return
		}
		verb := "get"
		if r.Method == http.MethodPost || strings.HasPrefix(r.URL.Path, "/exec/") ||
			strings.HasPrefix(r.URL.Path, "/attach/") || strings.HasPrefix(r.URL.Path, "/portForward/") {
			verb = "create"
		}
		subs := requestSubresources(r.URL.Path)
		if s.cfg.Authorizer != nil {
			// Each subresource in turn, as kube's kubelet: the fine-grained
			// one first, then nodes/proxy.
			for _, sub := range subs {
				allowed, reason, err := s.cfg.Authorizer.Authorize(r.Context(), u.name, u.groups, verb, sub)
				if err != nil {
					s.log.Warn("authorizing kubelet request", "user", u.name, "path", r.URL.Path, "err", err)
					http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=nodes, subresource(s)=%v)", u.name, verb, subs), http.StatusInternalServerError)
					return
				}
				if allowed {
					next.ServeHTTP(w, r)
					return
				}
				s.log.Debug("kubelet request forbidden", "user", u.name, "verb", verb, "subresource", sub, "reason", reason)
			}
		}
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=%v)", u.name, verb, subs), http.StatusForbidden)
	})
}

// requestSubresources are the nodes subresources that authorize a path,
// as kube's kubelet maps them (KubeletFineGrainedAuthz, on by default in
// v1.37): stats, metrics and log alone; healthz, pods and configz, or
// else proxy; anything else proxy.
func requestSubresources(path string) []string {
	switch {
	case strings.HasPrefix(path, "/stats/"):
		return []string{"stats"}
	case strings.HasPrefix(path, "/metrics"):
		return []string{"metrics"}
	case strings.HasPrefix(path, "/logs"):
		return []string{"log"}
	case path == "/healthz" || strings.HasPrefix(path, "/healthz/"):
		return []string{"healthz", "proxy"}
	case path == "/pods" || strings.HasPrefix(path, "/pods/"):
		return []string{"pods", "proxy"}
	case path == "/configz":
		return []string{"configz", "proxy"}
	}
	return []string{"proxy"}
}

// lookupContainer resolves {namespace}/{pod}/{container} to a pod this
// kubelet runs and one of its containers, answering 404 otherwise.
func (s *Server) lookupContainer(w http.ResponseWriter, r *http.Request) (*api.Pod, string, bool) {
	ns, name, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	pod, ok := s.cfg.Pods.GetPodByName(ns, name)
	if !ok || pod == nil {
		writeStatus(w, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("pod %q does not exist", ns+"/"+name)))
		return nil, "", false
	}
	for _, cs := range [][]api.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			if c.Name == container {
				return pod, container, true
			}
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == container {
			return pod, container, true
		}
	}
	writeStatus(w, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound, fmt.Sprintf("container %q not found in pod %q", container, ns+"/"+name)))
	return nil, "", false
}

// parseLogOptions reads the /containerLogs query.
func parseLogOptions(r *http.Request, now time.Time) (LogOptions, error) {
	q := r.URL.Query()
	o := LogOptions{Follow: queryBool(q.Get("follow")), Previous: queryBool(q.Get("previous")),
		Timestamps: queryBool(q.Get("timestamps")), TailLines: -1}
	ints := []struct {
		key string
		min int64
		dst *int64
	}{{"tailLines", 0, &o.TailLines}, {"limitBytes", 1, &o.LimitBytes}}
	for _, p := range ints {
		if v := q.Get(p.key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < p.min {
				return o, fmt.Errorf("invalid %s %q", p.key, v)
			}
			*p.dst = n
		}
	}
	if v := q.Get("sinceSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return o, fmt.Errorf("invalid sinceSeconds %q", v)
		}
		o.Since = now.Add(-time.Duration(n) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return o, fmt.Errorf("invalid sinceTime %q", v)
		}
		o.Since = t
	}
	return o, nil
}

func (s *Server) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	pod, container, ok := s.lookupContainer(w, r)
	if !ok {
		return
	}
	opts, err := parseLogOptions(r, time.Now())
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	dir, run, err := containerLogDir(s.cfg.PodLogsDir, pod, container, opts.Previous)
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// Records are small; batching them saves a TLS record per line.
	bw := bufio.NewWriterSize(w, 32<<10)
	defer bw.Flush()
	uid := pod.UID
	fl := follower{
		switchFiles: !opts.Previous,
		poll:        s.cfg.FollowPoll,
		flush: func() {
			_ = bw.Flush()
			_ = rc.Flush()
		},
		log: s.log,
		done: func() bool {
			if opts.Previous {
				return true
			}
			p, ok := s.cfg.Pods.GetPodByName(pod.Namespace, pod.Name)
			return !ok || p.UID != uid || p.DeletionTimestamp != nil && podStopped(p, container) ||
				p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
		},
	}
	lw := &logWriter{w: bw, opts: opts}
	if err := streamLog(r.Context(), dir, run, opts, lw, fl); err != nil && r.Context().Err() == nil {
		s.log.Warn("streaming container log", "pod", pod.Namespace+"/"+pod.Name, "container", container, "err", err)
	}
}

// podStopped reports that container has terminated in a pod being deleted.
func podStopped(p *api.Pod, container string) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.State.Terminated != nil
		}
	}
	return false
}

func (s *Server) servePods(w http.ResponseWriter, _ *http.Request) {
	pods := s.cfg.Pods.GetPods()
	list := api.PodList{TypeMeta: api.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: make([]api.Pod, 0, len(pods))}
	for _, p := range pods {
		c := api.DeepCopy(p)
		c.APIVersion, c.Kind = "v1", "Pod"
		list.Items = append(list.Items, *c)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

func queryBool(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}

// writeStatus answers with err's Status; an error without one is a 500
// carrying its text as is.
func writeStatus(w http.ResponseWriter, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewGeneric(http.StatusInternalServerError, api.StatusReasonInternalError, err.Error())
	}
	apierrors.WriteStatus(w, se.Status())
}
