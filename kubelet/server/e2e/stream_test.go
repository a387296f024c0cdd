package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestStreaming drives port-forward, attach and ephemeral containers
// (kubectl debug) through the apiserver to a kubelet on real containerd,
// with the real kubectl v1.37 and with our clients.
func TestStreaming(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	n := startNode(t, ctx, 1)
	kubectl := oracle.Path(t, "kubectl")

	one := int64(1)
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web"}, Spec: api.PodSpec{
		NodeName: n.name, TerminationGracePeriodSeconds: &one, RestartPolicy: api.RestartPolicyNever,
		Containers: []api.Container{
			{Name: "app", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent,
				Command: []string{"sh", "-c", "mkdir -p /www && echo hello-from-pod > /www/index.html && exec httpd -f -p 8080 -h /www"}},
			{Name: "talk", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent, Stdin: true, StdinOnce: true,
				Command: []string{"sh", "-c", "while read l; do echo \"got $l\"; done; echo bye"}},
		},
	}}
	pc := client.Resource[api.Pod](n.c).Namespace("default")
	if _, err := pc.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ctx, pc, "web", func(p *api.Pod) bool {
		return p.Status.Phase == api.PodRunning && len(p.Status.ContainerStatuses) == 2 &&
			p.Status.ContainerStatuses[0].State.Running != nil && p.Status.ContainerStatuses[1].State.Running != nil
	})
	// httpd is up once it answers inside the pod.
	for {
		var out bytes.Buffer
		err := remotecommand.Exec(ctx, n.cc, "/api/v1/namespaces/default/pods/web/exec",
			url.Values{"command": {"wget", "-q", "-O-", "http://127.0.0.1:8080/"}, "container": {"app"}, "stdout": {"true"}},
			remotecommand.Options{Stdout: &out})
		if err == nil && out.String() == "hello-from-pod\n" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("httpd in the pod: %v %q", err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	t.Run("kubectl port-forward over WebSocket", func(t *testing.T) {
		portForwardGet(t, ctx, kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "port-forward", "pod/web", ":8080"))
	})
	t.Run("kubectl port-forward over SPDY", func(t *testing.T) {
		portForwardGet(t, ctx, kubectlCmd(ctx, kubectl, n.kubeconfig, []string{"KUBECTL_PORT_FORWARD_WEBSOCKETS=false"}, "port-forward", "pod/web", ":8080"))
	})
	t.Run("kubectl port-forward to a closed port", func(t *testing.T) {
		cmd := kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "port-forward", "pod/web", ":9999")
		var stderr syncBuffer
		cmd.Stderr = &stderr
		local := startForward(t, cmd)
		resp, err := http.Get("http://" + local + "/")
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET through a forward to a closed port answered %s", resp.Status)
		}
		want := regexp.MustCompile(`"An error occurred forwarding" err="error forwarding port 9999 to pod [0-9a-f]+, uid : ` +
			`failed to execute portforward in network namespace \\".*\\": failed to connect to localhost:9999 inside namespace \\"[0-9a-f]+\\", ` +
			`IPv4: dial tcp4 127.0.0.1:9999: connect: connection refused IPv6 dial tcp6 \[::1\]:9999: connect: connection refused " localPort=\d+ remotePort=9999`)
		deadline := time.Now().Add(20 * time.Second)
		for !want.MatchString(stderr.String()) || !strings.Contains(stderr.String(), "error: lost connection to pod") {
			if time.Now().After(deadline) {
				t.Fatalf("kubectl's stderr:\n%s", stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("attach errors", func(t *testing.T) {
		err := remotecommand.Exec(ctx, n.cc, "/api/v1/namespaces/default/pods/web/attach",
			url.Values{"container": {"nope"}, "stdout": {"true"}}, remotecommand.Options{Stdout: io.Discard})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "container nope is not valid for pod web") {
			t.Errorf("attach to an unknown container: %v", err)
		}
		err = remotecommand.Exec(ctx, n.cc, "/api/v1/namespaces/default/pods/web/attach",
			url.Values{"stdout": {"true"}}, remotecommand.Options{Stdout: io.Discard})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "a container name must be specified for pod web, choose one of: [app talk]") {
			t.Errorf("attach without a container: %v", err)
		}
	})

	t.Run("attach without stdin in the container", func(t *testing.T) {
		// kubectl attach -i to a container without stdin: the session
		// runs, the input goes nowhere (as with containerd's CRI), and
		// the container's output from now on comes back.
		actx, acancel := context.WithTimeout(ctx, 3*time.Second)
		defer acancel()
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- remotecommand.Exec(actx, n.cc, "/api/v1/namespaces/default/pods/web/attach",
				url.Values{"container": {"app"}, "stdin": {"true"}, "stdout": {"true"}, "stderr": {"true"}},
				remotecommand.Options{Stdin: strings.NewReader("ignored\n"), Stdout: &out, Stderr: &out})
		}()
		select {
		case err := <-done:
			t.Fatalf("attach ended before the client left: %v", err)
		case <-actx.Done():
		}
		<-done
	})

	t.Run("kubectl attach with stdin", func(t *testing.T) {
		cmd := kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "attach", "web", "-c", "talk", "-i")
		pr, pw := io.Pipe()
		cmd.Stdin = pr
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Input is sent once the session is up (kubectl says so first).
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(stderr.String(), "If you don't see a command prompt, try pressing enter.") {
			if time.Now().After(deadline) {
				t.Fatalf("kubectl attach: %s", stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(pw, "ping\n")
		for !strings.Contains(stdout.String(), "got ping\n") {
			if time.Now().After(deadline) {
				t.Fatalf("kubectl attach stdout %q, stderr %q", stdout.String(), stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		// stdinOnce: closing our stdin closes the container's.
		pw.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("kubectl attach: %v\n%s", err, stderr.String())
		}
		if got := stdout.String(); got != "got ping\nbye\n" {
			t.Errorf("kubectl attach stdout %q", got)
		}
	})

	t.Run("ephemeral container validation", func(t *testing.T) {
		patch := `{"spec":{"ephemeralContainers":[{"name":"bad","image":"` + testimage.Ref + `","ports":[{"containerPort":80}],"targetContainerName":"nope"},` +
			`{"name":"app","image":"` + testimage.Ref + `"}]}}`
		_, err := n.c.Do(ctx, client.Request{Method: http.MethodPatch, Path: "/api/v1/namespaces/default/pods/web/ephemeralcontainers",
			Body: []byte(patch), ContentType: "application/strategic-merge-patch+json"})
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.Status().Code != 422 {
			t.Fatalf("invalid ephemeral containers: %v", err)
		}
		for _, want := range []string{`Pod "web" is invalid`, `spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container`,
			`spec.ephemeralContainers[0].targetContainerName: Not found: "nope"`, `spec.ephemeralContainers[1].name: Duplicate value: "app"`} {
			if !strings.Contains(se.Error(), want) {
				t.Errorf("error %q lacks %q", se.Error(), want)
			}
		}
		if _, err := pc.Update(ctx, withEphemeral(t, ctx, pc)); err == nil || !strings.Contains(err.Error(), "ephemeralContainers") {
			t.Errorf("adding an ephemeral container by a pod update: %v", err)
		}
	})

	t.Run("kubectl debug --target", func(t *testing.T) {
		cmd := kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "debug", "-i", "web", "--image="+testimage.Ref,
			"--image-pull-policy=IfNotPresent", "--target=app", "--container=dbg", "--", "sh")
		cmd.Stdin = &slowReader{r: strings.NewReader("ps\nexit\n"), delay: 2 * time.Second}
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl debug: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), "httpd -f -p 8080") {
			t.Errorf("ps in the debug container does not show the target's processes:\n%s\nstderr %s", stdout.String(), stderr.String())
		}
		p, err := pc.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Spec.EphemeralContainers) != 1 || p.Spec.EphemeralContainers[0].TargetContainerName != "app" {
			t.Errorf("ephemeral containers %+v", p.Spec.EphemeralContainers)
		}
		waitPod(t, ctx, pc, "web", func(p *api.Pod) bool {
			return len(p.Status.EphemeralContainerStatuses) == 1 && p.Status.EphemeralContainerStatuses[0].State.Terminated != nil
		})
		// Changing or removing it is refused.
		_, err = n.c.Do(ctx, client.Request{Method: http.MethodPatch, Path: "/api/v1/namespaces/default/pods/web/ephemeralcontainers",
			Body: []byte(`{"spec":{"ephemeralContainers":[{"name":"dbg","image":"other"}]}}`), ContentType: "application/strategic-merge-patch+json"})
		if err == nil || !strings.Contains(err.Error(), `spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed`) {
			t.Errorf("changing an ephemeral container: %v", err)
		}
	})
}

// withEphemeral is the pod as read, with an ephemeral container added.
func withEphemeral(t *testing.T, ctx context.Context, pc *client.ResourceClient[api.Pod, *api.Pod]) *api.Pod {
	t.Helper()
	p, err := pc.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, api.EphemeralContainer{Container: api.Container{Name: "sneaky", Image: testimage.Ref,
		ImagePullPolicy: api.PullIfNotPresent, TerminationMessagePolicy: api.TerminationMessageReadFile}})
	return p
}

func waitPod(t *testing.T, ctx context.Context, pc *client.ResourceClient[api.Pod, *api.Pod], name string, ok func(*api.Pod) bool) {
	t.Helper()
	for {
		p, err := pc.Get(ctx, name)
		if err == nil && ok(p) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("pod %s: %v %+v", name, err, p)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func kubectlCmd(ctx context.Context, kubectl, kubeconfig string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

var forwardingRE = regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+) -> \d+`)

// startForward starts a port-forward command and returns the local
// address it reports; the command is killed when the test ends.
func startForward(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
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
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwardingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("port-forward did not report its local port")
	}
	return ""
}

// portForwardGet fetches the pod's page through a port-forward, twice (two
// forwarded connections on one session).
func portForwardGet(t *testing.T, ctx context.Context, cmd *exec.Cmd) {
	t.Helper()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	local := startForward(t, cmd)
	for i := range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+local+"/", nil)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatalf("GET %d through port-forward: %v\n%s", i, err, stderr.String())
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello-from-pod\n" {
			t.Fatalf("GET %d through port-forward: %s %q\n%s", i, resp.Status, b, stderr.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// slowReader holds its input back for a while: a session's stdin that
// starts once the session is attached.
type slowReader struct {
	r     io.Reader
	delay time.Duration
	once  sync.Once
}

func (s *slowReader) Read(p []byte) (int, error) {
	s.once.Do(func() { time.Sleep(s.delay) })
	return s.r.Read(p)
}
