package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/root"
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
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}}, Spec: api.PodSpec{
		NodeName: n.name, TerminationGracePeriodSeconds: &one, RestartPolicy: api.RestartPolicyNever,
		Containers: []api.Container{
			{Name: "app", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent,
				Command: []string{"sh", "-c", "mkdir -p /www && echo hello-from-pod > /www/index.html && exec httpd -f -p 8080 -h /www"}},
			{Name: "talk", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent, Stdin: true, StdinOnce: true,
				Command: []string{"sh", "-c", "while read l; do echo \"got $l\"; done; echo bye"}},
			{Name: "talk2", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent, Stdin: true, StdinOnce: true,
				Command: []string{"sh", "-c", "while read l; do echo \"got $l\"; done; echo bye"}},
		},
	}}
	pc := client.Resource[api.Pod](n.c).Namespace("default")
	if _, err := pc.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ctx, pc, "web", func(p *api.Pod) bool {
		if p.Status.Phase != api.PodRunning || len(p.Status.ContainerStatuses) != 3 {
			return false
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running == nil {
				return false
			}
		}
		return true
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
	t.Run("kubectl-lite port-forward", func(t *testing.T) {
		if _, err := client.Resource[api.Service](n.c).Namespace("default").Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "web"},
			Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}}}); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"pod/web", ":8080"}, {"svc/web", ":80"}, {"service/web", ":http"}} {
			local, stop := liteForward(t, ctx, n.kubeconfig, args...)
			for i := range 2 {
				resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + local + "/")
				if err != nil {
					t.Fatalf("%v: GET %d: %v", args, i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "hello-from-pod\n" {
					t.Fatalf("%v: GET %d: %s %q", args, i, resp.Status, b)
				}
			}
			if out, errOut, code := stop(); code != 0 || !strings.Contains(out, "Handling connection for") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		}
		var errOut syncBuffer
		code := root.Run(ctx, cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut},
			[]string{"--kubeconfig", n.kubeconfig, "port-forward", "pod/web", "8080:nope"})
		if code != 1 || !strings.Contains(errOut.String(), "error: Pod 'web' does not have a named port 'nope'") {
			t.Errorf("named port: %d %q", code, errOut.String())
		}
	})

	t.Run("kubectl port-forward to a service", func(t *testing.T) {
		// kubectl picks the Service's pod and translates port 80 to 8080.
		portForwardGet(t, ctx, kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "port-forward", "svc/web", ":80"))
	})

	t.Run("kubectl-lite port-forward to a closed port", func(t *testing.T) {
		local, stop := liteForward(t, ctx, n.kubeconfig, "pod/web", ":9999")
		if resp, err := http.Get("http://" + local + "/"); err == nil {
			resp.Body.Close()
			t.Errorf("GET through a forward to a closed port answered %s", resp.Status)
		}
		out, errOut, code := stop()
		if code != 1 || !strings.Contains(errOut, `"An error occurred forwarding" err="error forwarding port 9999 to pod `) ||
			!strings.HasSuffix(errOut, "error: lost connection to pod\n") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})

	t.Run("kubectl-lite attach", func(t *testing.T) {
		var out, errOut syncBuffer
		code := root.Run(ctx, cli.Streams{In: &slowReader{r: strings.NewReader("one\ntwo\n"), delay: time.Second}, Out: &out, ErrOut: &errOut},
			[]string{"--kubeconfig", n.kubeconfig, "attach", "web", "-c", "talk2", "-i"})
		if code != 0 || out.String() != "got one\ngot two\nbye\n" ||
			!strings.HasSuffix(errOut.String(), "If you don't see a command prompt, try pressing enter.\n") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
		}
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

	t.Run("kubectl exec over SPDY", func(t *testing.T) {
		// kubectl's fallback when a WebSocket cannot be had.
		spdy := []string{"KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false"}
		cmd := kubectlCmd(ctx, kubectl, n.kubeconfig, spdy, "exec", "-i", "web", "-c", "app", "--", "sh", "-c", "cat; echo err >&2; exit 3")
		cmd.Stdin = strings.NewReader("ping\n")
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || stdout.String() != "ping\n" || !strings.HasPrefix(stderr.String(), "err\n") {
			t.Errorf("kubectl exec over SPDY: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
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
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "a container name must be specified for pod web, choose one of: [app talk talk2]") {
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

	t.Run("kubectl-lite debug --target", func(t *testing.T) {
		var out, errOut syncBuffer
		code := root.Run(ctx, cli.Streams{In: &slowReader{r: strings.NewReader("ps\nexit\n"), delay: 2 * time.Second}, Out: &out, ErrOut: &errOut},
			[]string{"--kubeconfig", n.kubeconfig, "debug", "-i", "web", "--image=" + testimage.Ref, "--image-pull-policy=IfNotPresent", "--target=app", "--", "sh"})
		if p, err := pc.Get(ctx, "web"); err != nil || len(p.Spec.EphemeralContainers) != 1 || p.Spec.EphemeralContainers[0].TargetContainerName != "app" {
			t.Errorf("ephemeral containers: %v", err)
		}
		if code != 0 || !strings.Contains(out.String(), "httpd -f -p 8080") ||
			!strings.HasPrefix(out.String(), "Targeting container \"app\". If you don't see processes from this container it may be because the container runtime doesn't support this feature.\nDefaulting debug container name to debugger-") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
		}
		var errOut2 syncBuffer
		code = root.Run(ctx, cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut2},
			[]string{"--kubeconfig", n.kubeconfig, "debug", "-t", "web", "--image=" + testimage.Ref})
		if code != 1 || errOut2.String() != "error: -i/--stdin is required for containers with -t/--tty=true\n" {
			t.Errorf("debug -t: %d %q", code, errOut2.String())
		}
	})

	t.Run("attach to an ephemeral container with a terminal", func(t *testing.T) {
		// What kubectl debug -it does after its patch: attach with a TTY.
		patch := `{"spec":{"ephemeralContainers":[{"name":"term","image":"` + testimage.Ref + `","imagePullPolicy":"IfNotPresent",` +
			`"command":["sh"],"stdin":true,"tty":true,"terminationMessagePolicy":"File"}]}}`
		if _, err := n.c.Do(ctx, client.Request{Method: http.MethodPatch, Path: "/api/v1/namespaces/default/pods/web/ephemeralcontainers",
			Body: []byte(patch), ContentType: "application/strategic-merge-patch+json"}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, ctx, pc, "web", func(p *api.Pod) bool {
			for _, s := range p.Status.EphemeralContainerStatuses {
				if s.Name == "term" {
					return s.State.Running != nil
				}
			}
			return false
		})
		var out syncBuffer
		sizes := make(chan remotecommand.Size, 1)
		sizes <- remotecommand.Size{Width: 100, Height: 40}
		err := remotecommand.Exec(ctx, n.cc, "/api/v1/namespaces/default/pods/web/attach",
			url.Values{"container": {"term"}, "stdin": {"true"}, "stdout": {"true"}, "tty": {"true"}},
			remotecommand.Options{Stdin: &slowReader{r: strings.NewReader("echo marker-$((40+2))\nexit\n"), delay: time.Second},
				Stdout: &out, TTY: true, Resize: sizes})
		if err != nil || !strings.Contains(out.String(), "marker-42") {
			t.Errorf("attach with a terminal: %v, output %q", err, out.String())
		}
	})

	t.Run("kubectl debug -it --target in a terminal", func(t *testing.T) {
		ptm, pts := openPTY(t)
		cmd := kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "debug", "-it", "web", "--image="+testimage.Ref,
			"--image-pull-policy=IfNotPresent", "--target=app", "--container=dbgtty", "--", "sh")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pts.Close()
		var screen syncBuffer
		go func() { _, _ = io.Copy(&screen, ptm) }()
		waitScreen := func(what string) {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(screen.String(), what) {
				if time.Now().After(deadline) {
					t.Fatalf("waiting for %q on the terminal:\n%s", what, screen.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		waitScreen("If you don't see a command prompt, try pressing enter.")
		time.Sleep(500 * time.Millisecond)
		_, _ = ptm.Write([]byte("ps -o pid,args; echo done-$((6*7))\r"))
		waitScreen("done-42")
		if !strings.Contains(screen.String(), "httpd -f -p 8080") {
			t.Errorf("the target's processes are not seen:\n%s", screen.String())
		}
		_, _ = ptm.Write([]byte("exit\r"))
		if err := cmd.Wait(); err != nil {
			t.Errorf("kubectl debug -it: %v\n%s", err, screen.String())
		}
		waitScreen("Session ended, the ephemeral container will not be restarted but may be reattached using 'kubectl attach web -c dbgtty -n default -i -t' if it is still running")
	})

	t.Run("kubectl-lite debug -it in a terminal", func(t *testing.T) {
		ptm, pts := openPTY(t)
		defer pts.Close()
		var screen syncBuffer
		go func() { _, _ = io.Copy(&screen, ptm) }()
		done := make(chan int, 1)
		go func() {
			done <- root.Run(ctx, cli.Streams{In: pts, Out: pts, ErrOut: pts}, []string{"--kubeconfig", n.kubeconfig,
				"debug", "-it", "web", "--image=" + testimage.Ref, "--image-pull-policy=IfNotPresent", "-c", "litetty", "--", "sh"})
		}()
		waitFor := func(what string) {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(screen.String(), what) {
				if time.Now().After(deadline) {
					t.Fatalf("waiting for %q on the terminal:\n%s", what, screen.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		waitFor("If you don't see a command prompt, try pressing enter.")
		time.Sleep(500 * time.Millisecond)
		_, _ = ptm.Write([]byte("echo lite-$((6*7))\r"))
		waitFor("lite-42")
		_, _ = ptm.Write([]byte("exit\r"))
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("exit %d:\n%s", code, screen.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("kubectl-lite debug -it did not end:\n%s", screen.String())
		}
		waitFor("Session ended, the ephemeral container will not be restarted but may be reattached using 'kubectl-lite attach web -c litetty -n default -i -t' if it is still running")
		p, err := pc.Get(ctx, "web")
		if err != nil || p.Spec.EphemeralContainers[len(p.Spec.EphemeralContainers)-1].Name != "litetty" {
			t.Errorf("kubectl-lite's debug container is not last (as kubectl's patch puts it): %v", err)
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
		if len(p.Spec.EphemeralContainers) != 5 || p.Spec.EphemeralContainers[4].Name != "dbg" || p.Spec.EphemeralContainers[4].TargetContainerName != "app" {
			t.Errorf("ephemeral containers %+v", p.Spec.EphemeralContainers)
		}
		waitPod(t, ctx, pc, "web", func(p *api.Pod) bool {
			return len(p.Status.EphemeralContainerStatuses) == 5 && p.Status.EphemeralContainerStatuses[4].State.Terminated != nil
		})
		// kubectl-lite describes them as kubectl does.
		section := func(out string) string {
			i, j := strings.Index(out, "Ephemeral Containers:"), strings.Index(out, "Conditions:")
			if i < 0 || j < i {
				return ""
			}
			return out[i:j]
		}
		real, err := kubectlCmd(ctx, kubectl, n.kubeconfig, nil, "describe", "pod", "web").Output()
		if err != nil {
			t.Fatal(err)
		}
		var lite syncBuffer
		root.Run(ctx, cli.Streams{In: strings.NewReader(""), Out: &lite, ErrOut: io.Discard}, []string{"--kubeconfig", n.kubeconfig, "describe", "pod", "web"})
		if want, got := section(string(real)), section(lite.String()); want == "" || got != want {
			t.Errorf("describe's Ephemeral Containers:\nkubectl:\n%s\nkubectl-lite:\n%s", want, got)
		}
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

// liteForward runs kubectl-lite port-forward until stop, which returns its
// output and exit code.
func liteForward(t *testing.T, ctx context.Context, kubeconfig string, args ...string) (string, func() (string, string, int)) {
	t.Helper()
	fctx, cancel := context.WithCancel(ctx)
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- root.Run(fctx, cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			append([]string{"--kubeconfig", kubeconfig, "port-forward"}, args...))
	}()
	var once sync.Once
	code := -1
	stop := func() (string, string, int) {
		once.Do(func() {
			select {
			case code = <-done: // it ended by itself (lost connection)
			case <-time.After(time.Second):
				cancel()
				code = <-done
			}
			cancel()
		})
		return out.String(), errOut.String(), code
	}
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := forwardingRE.FindStringSubmatch(out.String()); m != nil {
			return m[1], stop
		}
		if time.Now().After(deadline) {
			o, e, c := stop()
			t.Fatalf("kubectl-lite port-forward %v: exit %d, stdout %q, stderr %q", args, c, o, e)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openPTY opens a pseudo-terminal pair (/dev/ptmx), for running the real
// kubectl with -t.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120})
	return ptm, pts
}
