package realcomponents

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/internal/pki"
)

// The package's harness: one launcher for every process a test runs (the
// real Kubernetes binaries and ours), one poll for everything a test waits
// for, and the pair of apiservers (kube-apiserver and ours) the "as kube"
// tests send the same requests to.

// component is a process a test runs: a real Kubernetes binary or one of
// ours, its output in a log file.
type component struct {
	name string
	// port serves the real components' /healthz (0: none).
	port int
	*daemontest.Process
}

// launch runs bin with args, its output in a log file; at the end of the
// test it gets SIGTERM (SIGKILL after 30 s, which fails the test) and, when
// the test failed, the end of its log is printed. It is the package's one
// launcher: the others only say which binary with which flags.
func launch(t *testing.T, name, bin string, args ...string) *component {
	t.Helper()
	return &component{name: name, Process: daemontest.Start(t, bin, args...)}
}

// freePort returns a loopback port nobody listens on right now. The real
// binaries bind their ports themselves (they cannot inherit a socket the
// test holds, as ours can), so a port is picked and passed in a flag.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startKube runs the real kube-scheduler or kube-controller-manager with
// kubeconfig as its client, authentication and authorization kubeconfig,
// serving /healthz on a free loopback port, logging every request's status
// (klog -v=6, which responses reads).
func startKube(t *testing.T, name, kubeconfig string) *component {
	t.Helper()
	port := freePort(t)
	c := launch(t, name, oracle.Path(t, name),
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+t.TempDir(),
		"-v=6",
	)
	c.port = port
	return c
}

// healthz is the component's /healthz answer (the path is always allowed,
// as in kube's defaults; the serving certificate is self-signed).
func (c *component) healthz() (int, string, error) {
	e := &endpoint{name: c.name, base: fmt.Sprintf("https://127.0.0.1:%d", c.port),
		hc: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}}
	code, body, err := e.request("GET", "/healthz", "")
	return code, string(body), err
}

// logged reports whether the component's log has a line containing s.
func (c *component) logged(t *testing.T, s string) bool {
	t.Helper()
	b, err := os.ReadFile(c.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

// kubeAPIServer is a real kube-apiserver on a loopback port, its etcd an
// embedded one of the test's own, with the PKI a kubeadm cluster has.
type kubeAPIServer struct {
	dir string
	ca  *pki.CA
	// admin speaks to it as kubernetes-admin (system:masters).
	admin *endpoint
}

// startKubeAPIServer runs the real kube-apiserver with the flags a
// kubeadm control plane gives it (Node and RBAC authorization, client
// certificates, service-account keys, the default admission plugins) and
// waits until it is ready, extra flags appended. It skips the test with
// -short.
func startKubeAPIServer(t *testing.T, extra ...string) *kubeAPIServer {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real kube-apiserver (skipped with -short)")
	}
	etcd := etcdtest.Start(t)
	dir := t.TempDir()
	ca, err := pki.NewCA("kubernetes", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	servingCert, servingKey, err := ca.IssueServing("kube-apiserver", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	started := time.Now()
	proc := launch(t, "kube-apiserver", oracle.Path(t, "kube-apiserver"), append([]string{
		"--etcd-servers=" + strings.Join(etcd.Endpoints(), ","),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// A loopback address cannot be the kubernetes Service's endpoint.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "generated"),
		"--tls-cert-file=" + write("apiserver.crt", servingCert),
		"--tls-private-key-file=" + write("apiserver.key", servingKey),
		"--client-ca-file=" + write("ca.crt", ca.CertPEM()),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + write("sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})),
		"--service-account-signing-key-file=" + write("sa.key", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--profiling=false",
		"-v=2",
	}, extra...)...,
	)

	certPEM, keyPEM, err := ca.IssueClient("kubernetes-admin", []string{"system:masters"}, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}}}
	k := &kubeAPIServer{dir: dir, ca: ca,
		admin: &endpoint{name: "kube-apiserver", base: fmt.Sprintf("https://127.0.0.1:%d", port), hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}}

	// Ready: /readyz answers ok to an administrator.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitFor(ctx, t, "kube-apiserver to be ready", func() (bool, string) {
		select {
		case <-proc.Done():
			t.Fatalf("kube-apiserver exited: %s", proc.ExitStatus())
		default:
		}
		code, body, err := k.admin.request("GET", "/readyz", "")
		if err != nil {
			return false, err.Error()
		}
		return code == http.StatusOK, fmt.Sprintf("/readyz %d %s", code, body)
	})
	t.Logf("kube-apiserver ready %v after its start", time.Since(started).Round(100*time.Millisecond))
	return k
}

// kubeconfig writes a kubeconfig for a client certificate of user in
// groups and returns its path.
func (k *kubeAPIServer) kubeconfig(t *testing.T, user string, groups ...string) string {
	t.Helper()
	certPEM, keyPEM, err := k.ca.IssueClient(user, groups, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(k.dir, strings.NewReplacer(":", "-").Replace(user)+".kubeconfig")
	cfg := kubeconfig.NewForCluster(k.admin.base, k.ca.CertPEM(), user, kubeconfig.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "")
	if err := kubeconfig.Write(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// newClient is a minik8s client from a kubeconfig, unthrottled.
func newClient(t *testing.T, path string) *client.Client {
	t.Helper()
	cfg, err := kubeconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cfg.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cc.QPS = -1
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubectl runs the real kubectl with kubeconfig, stdin as its input, and
// returns its output; it fails the test when kubectl fails.
func kubectl(ctx context.Context, t *testing.T, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, oracle.Path(t, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitFor polls cond every 100 ms until it holds, failing the test with
// what and cond's last state when ctx ends. It is the package's one wait:
// for a server to be ready, a component to have synced, pods to run, a
// CRD to settle.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %s", what, state)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitWebRunning waits until the deployment manifest's 3 pods (app=web)
// run on the simulated nodes ("node-N").
func waitWebRunning(ctx context.Context, t *testing.T, c *client.Client) {
	t.Helper()
	pods := client.Resource[api.Pod](c).Namespace("default")
	waitFor(ctx, t, "the deployment's pods all Running on the nodes", func() (bool, string) {
		list, err := pods.List(ctx, client.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		running := 0
		var states []string
		for _, p := range list.Items {
			states = append(states, p.Name+"@"+p.Spec.NodeName+":"+string(p.Status.Phase))
			if strings.HasPrefix(p.Spec.NodeName, "node-") && p.Status.Phase == api.PodRunning {
				running++
			}
		}
		return running == 3 && len(list.Items) == 3, strings.Join(states, " ")
	})
}

// endpoint is one apiserver the same requests go to.
type endpoint struct {
	name string
	base string
	hc   *http.Client
}

// request sends body (YAML or JSON, or none; a PATCH's is a merge patch,
// or a JSON patch when it is a list) and returns the answer's code and
// body; the error is only for no answer.
func (e *endpoint) request(method, path, body string) (int, []byte, error) {
	var rd io.Reader
	var data []byte
	if body != "" {
		var err error
		if data, err = yaml.YAMLToJSON([]byte(body)); err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
			// A list is a JSON patch: as a merge patch it would replace
			// the whole object, which no test means.
			req.Header.Set("Content-Type", "application/json-patch+json")
		}
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// do is request that fails the test without an answer, with the body
// decoded (a body that is not JSON as {"text": BODY}).
func (e *endpoint) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	code, data, err := e.request(method, path, body)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", e.name, method, path, err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		// kube-apiserver's 404 for a path nothing serves is text.
		out = map[string]any{"text": string(data)}
	}
	return code, out
}

// must is do that fails unless the answer is code.
func (e *endpoint) must(t *testing.T, code int, method, path, body string) map[string]any {
	t.Helper()
	got, out := e.do(t, method, path, body)
	if got != code {
		t.Fatalf("%s: %s %s: got %d, want %d: %v", e.name, method, path, got, code, out)
	}
	return out
}

// apiservers are a real kube-apiserver v1.37 and a minik8s apiserver, each
// the test's own, both spoken to as a cluster administrator: the "as kube"
// tests send them the same requests and compare the answers.
type apiservers struct {
	kube, ours *endpoint
}

// startBoth starts the two apiservers; it skips the test with -short.
//
// Each test has its own kube-apiserver rather than one for the package:
// the tests write into the same namespace and cluster-scoped kinds (CRDs),
// and a shared server would make each test's answers depend on the
// others'.
func startBoth(t *testing.T) apiservers {
	t.Helper()
	kube := startKubeAPIServer(t).admin
	s := apiservertest.Start(t)
	return apiservers{kube: kube, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}}
}

// each is kube-apiserver, then minik8s.
func (a apiservers) each() []*endpoint { return []*endpoint{a.kube, a.ours} }

// must sends the request to both and fails unless each answers code.
func (a apiservers) must(t *testing.T, code int, method, path, body string) {
	t.Helper()
	for _, e := range a.each() {
		e.must(t, code, method, path, body)
	}
}

// sameAnswer sends one request to both and fails unless kube-apiserver
// answers code and minik8s the same code and body; the causes of an
// Invalid answer are compared sorted (see causesInOrder).
func (a apiservers) sameAnswer(t *testing.T, code int, method, path, body string) {
	t.Helper()
	if kc := a.compare(t, method, path, body, true); kc != code {
		t.Errorf("kube-apiserver answered %d, the case expects %d", kc, code)
	}
}

// sameRefusal sends one request to both and fails unless kube-apiserver
// refuses it and both answers are identical, causes in kube's order.
func (a apiservers) sameRefusal(t *testing.T, method, path, body string) {
	t.Helper()
	if kc := a.compare(t, method, path, body, false); kc < 400 {
		t.Errorf("kube-apiserver accepted %s %s: %d", method, path, kc)
	}
}

// compare sends one request to both, fails unless the codes and decoded
// bodies are identical (with sortCauses, once causesInOrder sorted them),
// and returns kube-apiserver's code.
func (a apiservers) compare(t *testing.T, method, path, body string, sortCauses bool) int {
	t.Helper()
	kc, kb := a.kube.do(t, method, path, body)
	oc, ob := a.ours.do(t, method, path, body)
	compact, _ := json.Marshal(kb)
	t.Logf("kube-apiserver %d: %s", kc, compact)
	if sortCauses {
		causesInOrder(t, kb)
		causesInOrder(t, ob)
	}
	if kc != oc || !reflect.DeepEqual(kb, ob) {
		kj, _ := json.MarshalIndent(kb, "", "  ")
		oj, _ := json.MarshalIndent(ob, "", "  ")
		t.Errorf("%s %s:\nkube-apiserver %d:\n%s\nminik8s %d:\n%s", method, path, kc, kj, oc, oj)
	}
	return kc
}

// sameAcceptance sends one request to both and fails unless both answer
// code with the same object and read the same back from each of reads,
// but for the metadata each server sets its own way.
func (a apiservers) sameAcceptance(t *testing.T, code int, method, path, body string, reads ...string) {
	t.Helper()
	var got [2][]map[string]any
	for i, e := range a.each() {
		got[i] = append(got[i], withoutServerMeta(e.must(t, code, method, path, body)))
		for _, r := range reads {
			got[i] = append(got[i], withoutServerMeta(e.must(t, http.StatusOK, "GET", r, "")))
		}
	}
	for i := range got[0] {
		if !reflect.DeepEqual(got[0][i], got[1][i]) {
			kj, _ := json.Marshal(got[0][i])
			oj, _ := json.Marshal(got[1][i])
			what := "answer"
			if i > 0 {
				what = "GET " + reads[i-1]
			}
			t.Errorf("%s %s, %s:\nkube-apiserver: %s\nminik8s:        %s", method, path, what, kj, oj)
		}
	}
}

// withoutServerMeta drops from a decoded object the metadata each server
// sets its own way (uid, resourceVersion, the timestamps, managedFields).
func withoutServerMeta(m map[string]any) map[string]any {
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "managedFields"} {
			delete(md, f)
		}
	}
	return m
}

// causesInOrder sorts an Invalid Status' causes, and the list of them its
// message ends with: kube-apiserver checks an object's properties in Go
// map order, so several causes come in any order. It fails the test when
// the message is not the causes' list.
func causesInOrder(t *testing.T, status map[string]any) {
	t.Helper()
	details, _ := status["details"].(map[string]any)
	raw, _ := details["causes"].([]any)
	if len(raw) < 2 {
		return
	}
	var listed []string
	for _, c := range raw {
		m := c.(map[string]any)
		f, _ := m["field"].(string)
		msg, _ := m["message"].(string)
		listed = append(listed, f+": "+msg)
	}
	message, _ := status["message"].(string)
	head, list, ok := strings.Cut(message, " is invalid: ")
	if !ok || list != "["+strings.Join(listed, ", ")+"]" {
		t.Errorf("the message does not list the causes in their order: %q, causes %q", message, listed)
		return
	}
	slices.SortStableFunc(raw, func(a, b any) int {
		am, bm := a.(map[string]any), b.(map[string]any)
		return cmp.Or(cmp.Compare(fmt.Sprint(am["field"]), fmt.Sprint(bm["field"])), cmp.Compare(fmt.Sprint(am["message"]), fmt.Sprint(bm["message"])))
	})
	slices.Sort(listed)
	status["message"] = head + " is invalid: [" + strings.Join(listed, ", ") + "]"
}
