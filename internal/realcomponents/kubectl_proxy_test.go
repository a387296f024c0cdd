package realcomponents

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/oracle"
)

// TestKubectlProxyAsKube is what the conformance specs '[sig-cli] Kubectl
// client Proxy server should support proxy with --port 0' and 'should
// support --unix-socket=/path' do, on kube-apiserver v1.37 and on
// minik8s: the real kubectl proxy (-p 0 --disable-filter, or on a unix
// socket) and a plain Go GET of /api/ and /api through it, decoded as
// APIVersions. Both must list the same versions, at least one: a refusal
// (a Status) decodes to none, which is how the spec failed while /api/
// was 404 on minik8s.
func TestKubectlProxyAsKube(t *testing.T) {
	t.Parallel()
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	kubeconfigs := []struct{ name, path string }{
		{"kube-apiserver", k.kubeconfig(t, "kubernetes-admin", "system:masters")},
		{"minik8s", s.Options.WriteKubeconfig},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	got := map[string][]string{}
	for _, kc := range kubeconfigs {
		// --port 0: the port kubectl prints, reached as localhost.
		port := startKubectlProxy(ctx, t, kc.path, "-p", "0", "--disable-filter")
		tcp := &http.Client{Timeout: 10 * time.Second}
		// --unix-socket: any host name, the socket dialled.
		sock := filepath.Join(t.TempDir(), "proxy.sock")
		startKubectlProxy(ctx, t, kc.path, "--unix-socket="+sock)
		unix := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
		}}
		for _, c := range []struct {
			how  string
			hc   *http.Client
			base string
		}{{"-p 0", tcp, fmt.Sprintf("http://localhost:%s", port)}, {"--unix-socket", unix, "http://localhost"}} {
			for _, path := range []string{"/api/", "/api"} {
				versions, err := proxiedAPIVersions(c.hc, c.base+path)
				if err != nil {
					t.Errorf("%s, kubectl proxy %s, GET %s: %v", kc.name, c.how, path, err)
					continue
				}
				key := c.how + " " + path
				if prev, ok := got[key]; ok && !slices.Equal(prev, versions) {
					t.Errorf("kubectl proxy %s, GET %s: kube-apiserver lists %v, minik8s %v", c.how, path, prev, versions)
				}
				got[key] = versions
			}
		}
	}
	t.Logf("versions through kubectl proxy: %v", got)
}

// proxyServing is kubectl proxy's first line (the spec's proxyRegexp).
var proxyServing = regexp.MustCompile(`Starting to serve on (?:127\.0\.0\.1:([0-9]+)|(.+))`)

// startKubectlProxy runs the real kubectl proxy until the test ends and
// returns the port it prints (empty on a unix socket), once it prints it.
func startKubectlProxy(ctx context.Context, t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, oracle.Path(t, "kubectl"), append([]string{"--kubeconfig", kubeconfig, "proxy"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("kubectl proxy %v printed %q: %v", args, line, err)
	}
	m := proxyServing.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("kubectl proxy %v printed %q", args, line)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return m[1]
}

// proxiedAPIVersions GETs url as the spec's curl does and decodes the
// body as APIVersions, whatever the status: a Status decodes to none.
func proxiedAPIVersions(hc *http.Client, url string) ([]string, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var v struct {
		Versions []string `json:"versions"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", resp.Status, err, body)
	}
	if len(v.Versions) == 0 {
		return nil, fmt.Errorf("%s without versions (the spec's 'Expected at least one supported apiversion'): %s", resp.Status, body)
	}
	return v.Versions, nil
}
