// Package daemontest runs the project's real binaries in tests: it builds a
// command, starts it with its log in the test's directory (printed when the
// test fails) and, when it serves, with loopback sockets the test bound
// first (Listen, Inherit), stops it at the end, and reads its Prometheus
// /metrics.
package daemontest

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/daemon"
)

// Build compiles the main package pkg ("github.com/minik8s/minik8s/scheduler")
// into the test's temporary directory and returns the binary's path.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), filepath.Base(pkg))
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		tb.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
//
// Deprecated: another process may bind the port before the server does
// (parallel test packages do); use Listen and Inherit, or pass a listener
// to an in-process server.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Listen returns a listener on a free 127.0.0.1 port, for a process started
// with Inherit (or StartInheriting) to serve on; it is closed when the test
// ends. The test holds the port from the start, so no other process can
// take it, not even while the daemon restarts.
func Listen(tb testing.TB) *net.TCPListener {
	tb.Helper()
	l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// Port is the port of a listener from Listen, for the daemon's port flag.
func Port(l *net.TCPListener) string { return strconv.Itoa(l.Addr().(*net.TCPAddr).Port) }

// Inherit makes cmd (not started yet) inherit ls: the daemon's
// daemon.Listen on a listener's address serves that socket instead of
// binding the port (see daemon.ListenFDsEnv). Call it before each Start.
func Inherit(tb testing.TB, cmd *exec.Cmd, ls ...*net.TCPListener) {
	tb.Helper()
	var fds []string
	for _, l := range ls {
		f, err := l.File()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { f.Close() })
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		fds = append(fds, strconv.Itoa(2+len(cmd.ExtraFiles)))
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, daemon.ListenFDsEnv+"="+strings.Join(fds, ","))
}

// Process is a started binary.
type Process struct {
	Cmd     *exec.Cmd
	LogPath string
	// done is closed once the process has exited and been reaped; state is
	// its exit status then.
	done  chan struct{}
	state *os.ProcessState
}

// Done is closed once the process has exited, whoever ended it.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill9 sends SIGKILL and waits until the process is gone; the test fails
// unless it died of that signal (it must still have been running). It
// returns the time the signal was sent.
func (p *Process) Kill9(tb testing.TB) time.Time {
	tb.Helper()
	at := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tb.Fatalf("SIGKILL %s: %v", filepath.Base(p.Cmd.Path), err)
	}
	<-p.done
	if ws, ok := p.state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		tb.Fatalf("%s did not die of SIGKILL: %v", filepath.Base(p.Cmd.Path), p.state)
	}
	return at
}

// ExitStatus is the process's exit status once Done is closed ("" before).
func (p *Process) ExitStatus() string {
	select {
	case <-p.done:
		return p.state.String()
	default:
		return ""
	}
}

// logTail is how much of a failed test's process log is printed.
const logTail = 8000

// stopTimeout is how long a process may take to exit after SIGTERM at the
// end of a test before it gets SIGKILL.
const stopTimeout = 30 * time.Second

// Start runs bin with args, with KUBECONFIG unset so only the flags say
// where the apiserver is, and stdout and stderr in a log file. At the end
// of the test the process gets SIGTERM and is waited for (SIGKILL after
// 30 s); when the test failed, the end of its log is printed.
func Start(tb testing.TB, bin string, args ...string) *Process {
	tb.Helper()
	return StartInheriting(tb, bin, nil, args...)
}

// StartInheriting is Start with listeners from Listen for the daemon to
// serve on (see Inherit): pass their ports in its flags.
func StartInheriting(tb testing.TB, bin string, ls []*net.TCPListener, args ...string) *Process {
	tb.Helper()
	logPath := filepath.Join(tb.TempDir(), filepath.Base(bin)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	if len(ls) > 0 {
		Inherit(tb, cmd, ls...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		tb.Fatal(err)
	}
	p := &Process{Cmd: cmd, LogPath: logPath, done: make(chan struct{})}
	go func() {
		// Wait reaps the process; after it, signals are no longer sent
		// (os.Process knows it is done), so a reused pid is never hit.
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.done)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopTimeout):
			tb.Errorf("%s did not stop within %v of SIGTERM", filepath.Base(bin), stopTimeout)
			_ = cmd.Process.Kill()
			<-p.done
		}
		logFile.Close()
		if tb.Failed() {
			out, _ := os.ReadFile(logPath)
			if len(out) > logTail {
				out = out[len(out)-logTail:]
			}
			tb.Logf("%s log (end):\n%s", filepath.Base(bin), out)
		}
	})
	return p
}

// Scrape reads a Prometheus text exposition into "name{labels}" -> value.
// An https URL is read without verifying the server's certificate (the
// daemons' own are self-signed).
func Scrape(url string) (map[string]float64, error) {
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 30 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}
