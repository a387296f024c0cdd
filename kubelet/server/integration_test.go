package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
	"github.com/minik8s/minik8s/kubelet/server"
)

// pods is the pod lookup of the test kubelet: the pods of its node as the
// apiserver has them.
type podSet struct {
	mu sync.Mutex
	m  map[string]*api.Pod
}

func (p *podSet) GetPodByName(ns, name string) (*api.Pod, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pod, ok := p.m[ns+"/"+name]
	return pod, ok
}

func (p *podSet) GetPods() []*api.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*api.Pod
	for _, pod := range p.m {
		out = append(out, pod)
	}
	return out
}

func (p *podSet) set(pod *api.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[pod.Namespace+"/"+pod.Name] = pod
}

// echoExec stands in for the container runtime: "cat" copies stdin to
// stdout, "echo ARGS" prints them, "fail N" writes to stderr and exits N,
// "size" prints the first terminal size.
type echoExec struct{}

func (echoExec) Exec(ctx context.Context, podUID, container string, cmd []string, tty bool,
	stdin io.Reader, stdout, stderr io.Writer, resize <-chan server.TerminalSize) (int, error) {
	if container == "gone" {
		return 0, fmt.Errorf("container %s of pod %s: %w", container, podUID, server.ErrContainerNotFound)
	}
	switch cmd[0] {
	case "cat":
		_, err := io.Copy(stdout, stdin)
		return 0, err
	case "echo":
		fmt.Fprintf(stdout, "%s in %s (tty=%v)\n", strings.Join(cmd[1:], " "), container, tty)
		return 0, nil
	case "fail":
		fmt.Fprintln(stderr, "failing on purpose")
		var code int
		fmt.Sscan(cmd[1], &code)
		return code, nil
	case "size":
		select {
		case sz := <-resize:
			fmt.Fprintf(stdout, "%dx%d\n", sz.Width, sz.Height)
		case <-ctx.Done():
		}
		return 0, nil
	}
	return 127, nil
}

type env struct {
	s       *apiservertest.Server
	admin   *client.Client
	adminCC *client.Config
	pods    *podSet
	logs    string
	kubelet string // https://kubeletIP:PORT
	root    string // the kubelet's root dir
	ctx     context.Context
}

func setup(t testing.TB) *env { return setupWith(t, nil) }

// setupWith is setup with the kubelet's certificate from getCert (nil: the
// self-signed one) and the apiserver's options changed by mutate.
// kubeletIP is where the test kubelet listens and what its Node lists: a
// loopback address that is not the apiserver's (its certificate names
// 127.0.0.1), so the kubelet serving approver may sign it.
const kubeletIP = "127.0.0.2"

func setupWith(t testing.TB, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), mutate ...func(*app.Options)) *env {
	t.Helper()
	s := apiservertest.Start(t, append([]func(*app.Options){apiservertest.WithTLS}, mutate...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cc.QPS = -1
	admin, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cert, err := bootstrap.EnsureServingCert(root, "node-k", []net.IP{net.ParseIP(kubeletIP)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", kubeletIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{s: s, admin: admin, adminCC: cc, pods: &podSet{m: map[string]*api.Pod{}}, logs: filepath.Join(root, "pods"), ctx: ctx}
	e.root = root
	srv, err := server.New(server.Config{Certificate: cert, GetCertificate: getCert, ClientCAs: s.PKI().CA.Pool(), PodLogsDir: e.logs,
		Pods: e.pods, Exec: echoExec{}, FollowPoll: 20 * time.Millisecond, Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(sctx, l) }()
	t.Cleanup(func() { scancel(); <-done })
	port := l.Addr().(*net.TCPAddr).Port
	e.kubelet = fmt.Sprintf("https://%s:%d", kubeletIP, port)

	// The Node, as its kubelet reports it: where the kubelet listens.
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-k"}}
	n, err = client.Resource[api.Node](admin).Create(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []api.NodeAddress{{Type: api.NodeHostName, Address: "node-k.invalid"}, {Type: api.NodeInternalIP, Address: kubeletIP}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	if _, err := client.Resource[api.Node](admin).UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	return e
}

// pod creates a pod bound to node-k with the given containers.
func (e *env) pod(t testing.TB, name, node string, containers ...string) *api.Pod {
	t.Helper()
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name}, Spec: api.PodSpec{NodeName: node}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, api.Container{Name: c, Image: "busybox"})
	}
	p, err := client.Resource[api.Pod](e.admin).Namespace("default").Create(e.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if node == "node-k" {
		e.pods.set(p)
	}
	return p
}

func (e *env) logFile(p *api.Pod, container string, restart int) string {
	return server.ContainerLogPath(e.logs, p.Namespace, p.Name, p.UID, container, restart)
}

func writeCRI(t testing.TB, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		stream := "stdout"
		if strings.HasPrefix(l, "E:") {
			stream, l = "stderr", strings.TrimPrefix(l, "E:")
		}
		if _, err := f.Write(server.FormatCRILine(time.Now(), stream, false, []byte(l))); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) getLog(t *testing.T, pod string, q url.Values) (string, error) {
	t.Helper()
	b, err := e.admin.Do(e.ctx, client.Request{Path: "/api/v1/namespaces/default/pods/" + pod + "/log", Query: q})
	return string(b), err
}

func TestLogsThroughAPIServer(t *testing.T) {
	e := setup(t)
	web := e.pod(t, "web", "node-k", "app")
	writeCRI(t, e.logFile(web, "app", 0), "first run 1", "E:first run error", "first run 3")
	writeCRI(t, e.logFile(web, "app", 1), "second run 1", "second run 2", "second run 3")

	tests := []struct {
		name  string
		query url.Values
		want  string
	}{
		{"current run", nil, "second run 1\nsecond run 2\nsecond run 3\n"},
		{"tailLines", url.Values{"tailLines": {"2"}}, "second run 2\nsecond run 3\n"},
		{"previous, stderr included", url.Values{"previous": {"true"}}, "first run 1\nfirst run error\nfirst run 3\n"},
		{"container named", url.Values{"container": {"app"}, "tailLines": {"1"}}, "second run 3\n"},
		{"limitBytes", url.Values{"limitBytes": {"8"}}, "second r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.getLog(t, "web", tt.query)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	got, err := e.getLog(t, "web", url.Values{"timestamps": {"true"}, "tailLines": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	ts, rest, _ := strings.Cut(got, " ")
	if _, perr := time.Parse(time.RFC3339Nano, ts); perr != nil || rest != "second run 3\n" {
		t.Errorf("timestamps: %q (%v)", got, perr)
	}

	// Errors, as kube-apiserver words them.
	two := e.pod(t, "two", "node-k", "a", "b")
	writeCRI(t, e.logFile(two, "b", 0), "from b")
	e.pod(t, "pending", "", "c")
	e.pod(t, "fresh", "node-k", "c")
	errTests := []struct {
		name, pod string
		query     url.Values
		check     func(error) bool
		msg       string
	}{
		{"two containers", "two", nil, apierrors.IsBadRequest, "a container name must be specified for pod two, choose one of: [a b]"},
		{"unknown container", "two", url.Values{"container": {"zzz"}}, apierrors.IsBadRequest, "container zzz is not valid for pod two"},
		{"not scheduled", "pending", nil, apierrors.IsBadRequest, "pod pending does not have a host assigned"},
		{"no such pod", "nope", nil, apierrors.IsNotFound, `pods "nope" not found`},
		{"no previous run", "two", url.Values{"container": {"b"}, "previous": {"true"}}, apierrors.IsBadRequest, `previous terminated container "b" in pod "two" not found`},
		{"not started", "fresh", nil, apierrors.IsBadRequest, `container "c" in pod "fresh" is waiting to start: ContainerCreating`},
		{"bad tailLines", "web", url.Values{"tailLines": {"-1"}}, apierrors.IsBadRequest, "tailLines"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.getLog(t, tt.pod, tt.query)
			if err == nil || !tt.check(err) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %v, want %q", err, tt.msg)
			}
		})
	}
	if got, err := e.getLog(t, "two", url.Values{"container": {"b"}}); err != nil || got != "from b\n" {
		t.Errorf("container b: %q, %v", got, err)
	}
}

func TestFollowThroughAPIServer(t *testing.T) {
	e := setup(t)
	p := e.pod(t, "tailer", "node-k", "app")
	writeCRI(t, e.logFile(p, "app", 0), "old line", "line 1")
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	body, err := e.admin.Stream(ctx, client.Request{Path: "/api/v1/namespaces/default/pods/tailer/log",
		Query: url.Values{"follow": {"true"}, "tailLines": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(want string) {
		t.Helper()
		select {
		case got, ok := <-lines:
			if !ok || got != want {
				t.Fatalf("followed line = %q (open %v), want %q", got, ok, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("timed out waiting for %q", want)
		}
	}
	next("line 1")
	writeCRI(t, e.logFile(p, "app", 0), "line 2")
	next("line 2")
	// The container restarts: the stream goes on with the new run.
	writeCRI(t, e.logFile(p, "app", 1), "after restart")
	next("after restart")
	// The pod is gone from the node: the stream ends.
	e.pods.mu.Lock()
	delete(e.pods.m, "default/tailer")
	e.pods.mu.Unlock()
	select {
	case l, ok := <-lines:
		if ok {
			t.Fatalf("unexpected line %q after the pod left", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("follow did not end when the pod left the node")
	}
}

func TestExecThroughAPIServer(t *testing.T) {
	e := setup(t)
	e.pod(t, "shell", "node-k", "main", "gone")
	path := "/api/v1/namespaces/default/pods/shell/exec"
	run := func(t *testing.T, q url.Values, stdin string, tty bool) (string, string, error) {
		t.Helper()
		var out, errb bytes.Buffer
		opts := remotecommand.Options{Stdout: &out, TTY: tty}
		if !tty {
			opts.Stderr = &errb
			q.Set("stderr", "true")
		}
		q.Set("stdout", "true")
		if stdin != "" {
			opts.Stdin = strings.NewReader(stdin)
			q.Set("stdin", "true")
		}
		if tty {
			q.Set("tty", "true")
		}
		err := remotecommand.Exec(e.ctx, e.adminCC, path, q, opts)
		return out.String(), errb.String(), err
	}
	t.Run("echo", func(t *testing.T) {
		out, _, err := run(t, url.Values{"container": {"main"}, "command": {"echo", "hello", "world"}}, "", false)
		if err != nil || out != "hello world in main (tty=false)\n" {
			t.Errorf("got %q, %v", out, err)
		}
	})
	t.Run("stdin to stdout", func(t *testing.T) {
		in := strings.Repeat("0123456789", 10000) // more than one message
		out, _, err := run(t, url.Values{"container": {"main"}, "command": {"cat"}}, in, false)
		if err != nil || out != in {
			t.Errorf("cat returned %d bytes, %v; want %d", len(out), err, len(in))
		}
	})
	t.Run("exit code and stderr", func(t *testing.T) {
		_, stderr, err := run(t, url.Values{"container": {"main"}, "command": {"fail", "3"}}, "", false)
		var ee *remotecommand.ExitError
		if !errors.As(err, &ee) || ee.Code != 3 || stderr != "failing on purpose\n" {
			t.Errorf("got %v, stderr %q; want exit code 3", err, stderr)
		}
	})
	t.Run("tty with resize", func(t *testing.T) {
		var out bytes.Buffer
		resize := make(chan remotecommand.Size, 1)
		resize <- remotecommand.Size{Width: 120, Height: 40}
		q := url.Values{"container": {"main"}, "command": {"size"}, "stdout": {"true"}, "tty": {"true"}}
		err := remotecommand.Exec(e.ctx, e.adminCC, path, q, remotecommand.Options{Stdout: &out, TTY: true, Resize: resize})
		if err != nil || out.String() != "120x40\n" {
			t.Errorf("got %q, %v", out.String(), err)
		}
	})
	t.Run("container required", func(t *testing.T) {
		_, _, err := run(t, url.Values{"command": {"echo"}}, "", false)
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "a container name must be specified for pod shell, choose one of: [main gone]") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("runtime does not find the container", func(t *testing.T) {
		_, _, err := run(t, url.Values{"container": {"gone"}, "command": {"echo"}}, "", false)
		if err == nil || !strings.Contains(err.Error(), "container not found") {
			t.Errorf("got %v", err)
		}
	})
}

// TestKubeletAuth: the kubelet admits only clients with a certificate of the
// cluster CA that are the apiserver (or cluster admins).
func TestKubeletAuth(t *testing.T) {
	e := setup(t)
	p := e.pod(t, "web", "node-k", "app")
	writeCRI(t, e.logFile(p, "app", 0), "secret output")
	ca := e.s.PKI().CA
	issue := func(user string, groups ...string) *tls.Certificate {
		certPEM, keyPEM, err := ca.IssueClient(user, groups, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	other, err := pki.NewCA("not-the-cluster", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	strangerPEM, strangerKey, _ := other.IssueClient(server.APIServerKubeletClientUser, []string{"system:masters"}, time.Hour)
	stranger, _ := tls.X509KeyPair(strangerPEM, strangerKey)
	apiserverCert, err := tls.LoadX509KeyPair(filepath.Join(e.s.Options.CertDir, "apiserver-kubelet-client.crt"), filepath.Join(e.s.Options.CertDir, "apiserver-kubelet-client.key"))
	if err != nil {
		t.Fatalf("the apiserver's kubelet client certificate: %v", err)
	}
	tests := []struct {
		name string
		cert *tls.Certificate
		want int
	}{
		{"no certificate", nil, http.StatusUnauthorized},
		{"another CA", &stranger, http.StatusUnauthorized},
		{"a user of the cluster", issue("alice", "developers"), http.StatusForbidden},
		{"a node", issue("system:node:node-x", "system:nodes"), http.StatusForbidden},
		{"a cluster admin", issue("root", "system:masters"), http.StatusOK},
		{"the apiserver", &apiserverCert, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the kubelet's self-signed certificate
			if tt.cert != nil {
				tc.Certificates = []tls.Certificate{*tt.cert}
			}
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 30 * time.Second}
			resp, err := hc.Get(e.kubelet + "/containerLogs/default/web/app")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tt.want)
			}
			if tt.want == http.StatusOK && string(b) != "secret output\n" {
				t.Errorf("body %q", b)
			}
		})
	}
	// The kubelet's certificate names the node; the apiserver does not
	// check it (no --kubelet-certificate-authority), but clients may.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(e.kubelet, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // inspecting it
	if err != nil {
		t.Fatal(err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	if leaf.VerifyHostname(kubeletIP) != nil || leaf.VerifyHostname("node-k") != nil {
		t.Errorf("serving certificate names %v %v", leaf.DNSNames, leaf.IPAddresses)
	}

	// Through the apiserver, RBAC decides: a user without pods/log gets 403
	// from the apiserver itself.
	certPEM, keyPEM, _ := ca.IssueClient("mallory", nil, time.Hour)
	mc, err := client.New(&client.Config{Host: e.s.SecureURL(), CAData: ca.CertPEM(), CertData: certPEM, KeyData: keyPEM, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Do(e.ctx, client.Request{Path: "/api/v1/namespaces/default/pods/web/log"}); !apierrors.IsForbidden(err) {
		t.Errorf("mallory reading logs: %v, want Forbidden", err)
	}
}

func TestPodsEndpoint(t *testing.T) {
	e := setup(t)
	e.pod(t, "a", "node-k", "c")
	e.pod(t, "b", "node-k", "c")
	certPEM, keyPEM, _ := e.s.PKI().CA.IssueClient("root", []string{"system:masters"}, time.Hour)
	c, _ := tls.X509KeyPair(certPEM, keyPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{c}}}} //nolint:gosec // self-signed kubelet
	resp, err := hc.Get(e.kubelet + "/pods")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"kind":"PodList"`) || !strings.Contains(string(b), `"name":"a"`) || !strings.Contains(string(b), `"name":"b"`) {
		t.Errorf("/pods = %d %s", resp.StatusCode, b)
	}
	// /healthz on the kubelet port needs authentication, as kube's kubelet
	// (the plain health port answers anyone); an allowed user gets ok.
	resp2, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}).Get(e.kubelet + "/healthz") //nolint:gosec // self-signed kubelet
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusUnauthorized {
		t.Errorf("/healthz without credentials = %d, want 401", resp2.StatusCode)
	}
	resp3, err := hc.Get(e.kubelet + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp3.Body.Close()
	if resp3.StatusCode != 200 {
		t.Errorf("/healthz with the client certificate = %d", resp3.StatusCode)
	}
}

// TestExecNeedsCreate: over WebSocket (a GET) exec needs create on
// pods/exec, not just get, as in kube-apiserver 1.35; get on pods/log is
// enough for logs.
func TestExecNeedsCreate(t *testing.T) {
	e := setup(t)
	p := e.pod(t, "web", "node-k", "app")
	writeCRI(t, e.logFile(p, "app", 0), "hello")
	ca := e.s.PKI().CA
	userClient := func(name string) *client.Config {
		certPEM, keyPEM, err := ca.IssueClient(name, nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return &client.Config{Host: e.s.SecureURL(), CAData: ca.CertPEM(), CertData: certPEM, KeyData: keyPEM, QPS: -1}
	}
	grant := func(user string, verbs ...string) {
		t.Helper()
		role := &api.Role{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: user},
			Rules: []api.PolicyRule{{Verbs: verbs, APIGroups: []string{""}, Resources: []string{"pods/exec", "pods/log", "pods/attach", "pods/portforward"}}}}
		if _, err := client.Resource[api.Role](e.admin).Namespace("default").Create(e.ctx, role); err != nil {
			t.Fatal(err)
		}
		rb := &api.RoleBinding{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: user},
			Subjects: []api.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
			RoleRef:  api.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: user}}
		if _, err := client.Resource[api.RoleBinding](e.admin).Namespace("default").Create(e.ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	grant("viewer", "get")
	grant("operator", "get", "create")
	q := url.Values{"command": {"echo", "hi"}, "stdout": {"true"}}
	path := "/api/v1/namespaces/default/pods/web/exec"

	viewer := userClient("viewer")
	poll := func(what string, f func() error) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := f()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	vc, _ := client.New(viewer)
	poll("viewer reads logs (RBAC caches may lag)", func() error {
		_, err := vc.Do(e.ctx, client.Request{Path: "/api/v1/namespaces/default/pods/web/log"})
		return err
	})
	err := remotecommand.Exec(e.ctx, viewer, path, q, remotecommand.Options{Stdout: io.Discard})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot create resource "pods/exec"`) {
		t.Errorf("viewer exec: %v, want Forbidden for create pods/exec", err)
	}
	// The other WebSocket subresources too (a GET that needs create).
	err = remotecommand.Exec(e.ctx, viewer, "/api/v1/namespaces/default/pods/web/attach", url.Values{"stdout": {"true"}}, remotecommand.Options{Stdout: io.Discard})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot create resource "pods/attach"`) {
		t.Errorf("viewer attach: %v, want Forbidden for create pods/attach", err)
	}
	_, err = remotecommand.Dial(e.ctx, viewer, "/api/v1/namespaces/default/pods/web/portforward", nil, "SPDY/3.1+portforward.k8s.io")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot create resource "pods/portforward"`) {
		t.Errorf("viewer port-forward: %v, want Forbidden for create pods/portforward", err)
	}
	var out bytes.Buffer
	poll("operator execs", func() error {
		out.Reset()
		return remotecommand.Exec(e.ctx, userClient("operator"), path, q, remotecommand.Options{Stdout: &out})
	})
	if out.String() != "hi in app (tty=false)\n" {
		t.Errorf("operator exec output %q", out.String())
	}
}

// TestExecProtocolsDirect speaks to the kubelet as the apiserver does, with
// each subprotocol.
func TestExecProtocolsDirect(t *testing.T) {
	e := setup(t)
	e.pod(t, "shell", "node-k", "main")
	certPEM, keyPEM, _ := e.s.PKI().CA.IssueClient("kube-apiserver-kubelet-client", []string{"system:masters"}, time.Hour)
	cert, _ := tls.X509KeyPair(certPEM, keyPEM)
	u := "wss" + strings.TrimPrefix(e.kubelet, "https") + "/exec/default/shell/main?command=cat&stdin=true&stdout=true"
	dial := func(protos ...string) (*websocket.Conn, *http.Response, error) {
		d := websocket.Dialer{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}, //nolint:gosec // self-signed kubelet
			Subprotocols: protos, HandshakeTimeout: 10 * time.Second}
		return d.DialContext(e.ctx, u, nil)
	}
	if _, resp, err := dial("v9.channel.k8s.io"); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unsupported subprotocol: %v %v", resp, err)
	}
	for _, proto := range []string{server.ProtocolV4, server.ProtocolV5} {
		t.Run(proto, func(t *testing.T) {
			c, _, err := dial(proto)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Subprotocol() != proto {
				t.Fatalf("negotiated %q", c.Subprotocol())
			}
			if err := c.WriteMessage(websocket.BinaryMessage, append([]byte{0}, "ping"...)); err != nil {
				t.Fatal(err)
			}
			if proto == server.ProtocolV5 {
				// v5 closes stdin explicitly; cat then ends.
				if err := c.WriteMessage(websocket.BinaryMessage, []byte{255, 0}); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, status string
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			for status == "" {
				_, msg, err := c.ReadMessage()
				if err != nil {
					if proto == server.ProtocolV4 && stdout == "ping" {
						break
					}
					t.Fatalf("read: %v (stdout %q)", err, stdout)
				}
				switch msg[0] {
				case 1:
					stdout += string(msg[1:])
					if proto == server.ProtocolV4 && stdout == "ping" {
						// v4 has no stdin close: hanging up ends the command.
						c.Close()
						return
					}
				case 3:
					if len(msg) > 1 {
						status = string(msg[1:])
					}
				}
			}
			if stdout != "ping" || !strings.Contains(status, `"status":"Success"`) {
				t.Errorf("stdout %q status %s", stdout, status)
			}
		})
	}
}

// kubeletClient talks to the test kubelet as the apiserver does.
func (e *env) kubeletClient(t testing.TB) *http.Client {
	t.Helper()
	certPEM, keyPEM, err := e.s.PKI().CA.IssueClient(server.APIServerKubeletClientUser, []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{c}}}} //nolint:gosec // self-signed kubelet
}

// TestKubeletDown: the node's kubelet does not answer.
func TestKubeletDown(t *testing.T) {
	e := setup(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: "dead"}}
	n, err = client.Resource[api.Node](e.admin).Create(e.ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []api.NodeAddress{{Type: api.NodeInternalIP, Address: "127.0.0.1"}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	if _, err := client.Resource[api.Node](e.admin).UpdateStatus(e.ctx, n); err != nil {
		t.Fatal(err)
	}
	e.pod(t, "orphan", "dead", "app")
	_, err = e.getLog(t, "orphan", nil)
	// kube-apiserver's: the client's error, `Get "URL": dial tcp ...`.
	if !apierrors.IsInternalError(err) || !strings.HasPrefix(err.Error(), `Get "https://127.0.0.1:`) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("logs from a dead kubelet: %v", err)
	}
	err = remotecommand.Exec(e.ctx, e.adminCC, "/api/v1/namespaces/default/pods/orphan/exec", url.Values{"command": {"true"}, "stdout": {"true"}},
		remotecommand.Options{Stdout: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "error dialing backend") {
		t.Errorf("exec on a dead kubelet: %v", err)
	}
}
