package root_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/oracle"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files from the current output")

// binary is the kubectl-lite built once for all tests.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "kubectl-lite-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "kubectl-lite")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(gobin, "build", "-o", binary, "github.com/minik8s/minik8s/kubectl-lite")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build kubectl-lite:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type cluster struct {
	t          *testing.T
	kubeconfig string
	client     *client.Client
	env        []string
}

// startCluster starts a real apiserver over plain HTTP and writes a
// kubeconfig pointing at it.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	s := apiservertest.Start(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, kubeconfig.NewForCluster(s.URL(), nil, "admin", kubeconfig.AuthInfo{}, "")); err != nil {
		t.Fatal(err)
	}
	return newCluster(t, path)
}

// startTLSCluster starts a secured apiserver and uses its admin kubeconfig.
func startTLSCluster(t *testing.T) *cluster {
	t.Helper()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	return newCluster(t, s.Options.WriteKubeconfig)
}

func newCluster(t *testing.T, path string) *cluster {
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
	return &cluster{t: t, kubeconfig: path, client: c}
}

func (c *cluster) command(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "HOME="+c.t.TempDir(), "KUBECONFIG=")
	cmd.Env = append(cmd.Env, c.env...)
	return cmd
}

// run executes the kubectl-lite binary against the cluster.
func (c *cluster) run(stdin string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	return c.runCLI(c.t, binary, stdin, c.env, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
}

// kubectl runs the real kubectl (see internal/oracle) against the cluster.
func (c *cluster) kubectl(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	return c.runCLI(c.t, oracle.Path(c.t, "kubectl"), "", nil, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
}

// runCLI runs bin (kubectl-lite or the real kubectl) with a fresh HOME
// (no discovery cache: KUBECACHEDIR unset), no KUBECONFIG, stdin and
// extra environment, and returns its output and exit code; t fails when
// bin cannot run at all.
func (c *cluster) runCLI(t testing.TB, bin, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=", "KUBECACHEDIR=")
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errOut.String(), code
}

func (c *cluster) mustRun(stdin string, args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("kubectl-lite %v: exit %d, stderr %q", args, code, errOut)
	}
	return out
}

// wantFail runs args and checks the exit code is 1 and stderr is exactly
// the one error line wanted.
func (c *cluster) wantFail(want string, args ...string) {
	c.t.Helper()
	c.wantFailIn("", want, args...)
}

// wantFailIn is wantFail with stdin.
func (c *cluster) wantFailIn(stdin, want string, args ...string) {
	c.t.Helper()
	out, errOut, code := c.run(stdin, args...)
	if code != 1 || errOut != want+"\n" {
		c.t.Errorf("kubectl-lite %v: exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", args, code, out, errOut, want)
	}
}

// stream is a running kubectl-lite whose stdout lines are collected.
type stream struct {
	t      *testing.T
	cmd    *exec.Cmd
	cancel context.CancelFunc
	mu     sync.Mutex
	lines  []string
	done   chan struct{}
	stderr bytes.Buffer
}

func (c *cluster) start(args ...string) *stream {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	s := &stream{t: c.t, cancel: cancel, done: make(chan struct{})}
	s.cmd = c.command(ctx, "", args...)
	s.cmd.Stderr = &s.stderr
	pipe, err := s.cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			s.mu.Unlock()
		}
		io.Copy(io.Discard, pipe)
	}()
	c.t.Cleanup(func() { s.stop() })
	return s
}

// waitLine waits until a line after the first n satisfies match, and
// returns its index.
func (s *stream) waitLine(from int, what string, match func(string) bool) int {
	s.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for i := from; i < len(s.lines); i++ {
			if match(s.lines[i]) {
				s.mu.Unlock()
				return i
			}
		}
		s.mu.Unlock()
		select {
		case <-s.done:
			s.mu.Lock()
			lines := append([]string(nil), s.lines...)
			s.mu.Unlock()
			for i := from; i < len(lines); i++ {
				if match(lines[i]) {
					return i
				}
			}
			s.t.Fatalf("process ended before %s; output %q, stderr %q", what, lines, s.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t.Fatalf("no %s within 45s; output so far %q", what, s.lines)
	return -1
}

// wait waits for the process to end and returns its exit code.
func (s *stream) wait() int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatal("process did not end")
	}
	err := s.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0
}

func (s *stream) output() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

func (s *stream) stop() {
	s.cancel()
	<-s.done
	s.cmd.Wait()
}
