package realcomponents

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/internal/pki"
)

// kubeAPIServer is a real kube-apiserver on a loopback port, its etcd an
// embedded one of the test's own, with the PKI a kubeadm cluster has.
type kubeAPIServer struct {
	url string
	dir string
	ca  *pki.CA
	log string
}

// startKubeAPIServer runs the real kube-apiserver with the flags a
// kubeadm control plane gives it (Node and RBAC authorization, client
// certificates, service-account keys, the default admission plugins) and
// waits until it is ready.
func startKubeAPIServer(t *testing.T) *kubeAPIServer {
	t.Helper()
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
	k := &kubeAPIServer{url: fmt.Sprintf("https://127.0.0.1:%d", port), dir: dir, ca: ca, log: filepath.Join(dir, "kube-apiserver.log")}
	args := []string{
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
	}
	proc := run(t, "kube-apiserver", oracle.Path(t, "kube-apiserver"), k.log, args)

	// Ready: /readyz answers ok to an administrator.
	certPEM, keyPEM, err := ca.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig := &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := hc.Get(k.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return k
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver not ready after 2m (last: %v)\n%s", err, tail(k.log, 40))
		}
		select {
		case err := <-proc.done:
			proc.done <- err // for the cleanup
			t.Fatalf("kube-apiserver exited: %v\n%s", err, tail(k.log, 20))
		case <-time.After(500 * time.Millisecond):
		}
	}
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
	cfg := kubeconfig.NewForCluster(k.url, k.ca.CertPEM(), user, kubeconfig.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "")
	if err := kubeconfig.Write(path, cfg); err != nil {
		t.Fatal(err)
	}
	return path
}

// run starts a process whose output goes to logPath; it is interrupted
// (then killed) when the test ends, and its log tail shown if it failed.
func run(t *testing.T, name, path, logPath string, args []string) *component {
	t.Helper()
	c := &component{name: name, log: logPath, done: make(chan error, 1)}
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(path, args...)
	c.cmd.Stdout, c.cmd.Stderr = out, out
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { c.done <- c.cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", name, tail(logPath, 40))
		}
	})
	return c
}

// buildOurs builds a minik8s daemon from this repository into dir.
func buildOurs(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, "github.com/minik8s/minik8s/"+pkg)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// controllerRoles are the roles of kube's own controllers that minik8s'
// controller-manager runs (kube-controller-manager gives each controller
// its service account's identity; ours runs them all as one user, so an
// administrator binds that user to the same roles).
var controllerRoles = []string{
	"system:controller:deployment-controller",
	"system:controller:replicaset-controller",
	"system:controller:endpoint-controller",
	"system:controller:endpointslice-controller",
	"system:controller:generic-garbage-collector",
	"system:controller:job-controller",
	"system:controller:namespace-controller",
	"system:controller:node-controller",
	"system:controller:service-account-controller",
	"system:controller:root-ca-cert-publisher",
}

// TestOursOnRealAPIServer: minik8s' scheduler and controller-manager run
// unchanged against the real kube-apiserver v1.37, as the users kube's
// bootstrap policy knows them by: a Deployment applied with the real
// kubectl becomes a ReplicaSet and Running pods that our scheduler bound
// to nodes.
func TestOursOnRealAPIServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real kube-apiserver (skipped with -short)")
	}
	k := startKubeAPIServer(t)
	adminConfig := k.kubeconfig(t, "kubernetes-admin", "system:masters")
	admin := newClient(t, adminConfig)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, oracle.Path(t, "kubectl"), append([]string{"--kubeconfig", adminConfig}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, role := range controllerRoles {
		kubectl("", "create", "clusterrolebinding", "minik8s:"+strings.TrimPrefix(role, "system:controller:"),
			"--clusterrole="+role, "--user=system:kube-controller-manager")
	}

	bin := t.TempDir()
	logs := t.TempDir()
	ours := []*component{run(t, "scheduler", buildOurs(t, bin, "scheduler"), filepath.Join(logs, "scheduler.log"), []string{
		"--kubeconfig=" + k.kubeconfig(t, "system:kube-scheduler"), "--bind-address=127.0.0.1", "--port=0"}),
		run(t, "controller-manager", buildOurs(t, bin, "controller-manager"), filepath.Join(logs, "controller-manager.log"), []string{
			"--kubeconfig=" + k.kubeconfig(t, "system:kube-controller-manager"), "--bind-address=127.0.0.1", "--port=0",
			"--allocate-node-cidrs=false"})}

	runNodes(t, admin, 2)
	controllermanagertest.RunKubelet(t, admin, controllermanagertest.KubeletOptions{Nodes: 2, LeaveBinding: true})
	if out := kubectl(deployment, "apply", "-f", "-"); !strings.Contains(out, "deployment.apps/web created") {
		t.Fatalf("kubectl apply: %s", out)
	}

	pods := client.Resource[api.Pod](admin).Namespace("default")
	var last string
	for {
		list, err := pods.List(ctx, client.ListOptions{LabelSelector: "app=web"})
		if err == nil {
			running := 0
			var states []string
			for _, p := range list.Items {
				states = append(states, p.Name+"@"+p.Spec.NodeName+":"+string(p.Status.Phase))
				if strings.HasPrefix(p.Spec.NodeName, "node-") && p.Status.Phase == api.PodRunning {
					running++
				}
			}
			last = strings.Join(states, " ")
			if running == 3 && len(list.Items) == 3 {
				break
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pods of the deployment not all Running on the nodes: %s", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
	events := kubectl("", "get", "events", "-n", "default", "--field-selector=reason=Scheduled", "-o", "jsonpath={range .items[*]}{.source.component}{\"\\n\"}{end}")
	if n := strings.Count(events, "default-scheduler"); n < 3 {
		t.Errorf("%d Scheduled events from default-scheduler, want 3:\n%s", n, events)
	}
	for {
		out := kubectl("", "get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}")
		if out == "3" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("deployment never had 3 available replicas (last %q)", out)
		case <-time.After(300 * time.Millisecond):
		}
	}
	// Nothing they asked for was refused, unknown or in an encoding the
	// real apiserver does not take, and nothing went wrong on their side.
	for _, c := range ours {
		b, err := os.ReadFile(c.log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "forbidden") ||
				strings.Contains(line, "could not find the requested resource") || strings.Contains(line, "415") {
				t.Errorf("%s: %s", c.name, line)
			}
		}
	}
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
