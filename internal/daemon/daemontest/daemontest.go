// Package daemontest runs the project's real binaries in tests: it builds a
// command, starts it on a free loopback port with its log in the test's
// directory (printed when the test fails), stops it at the end, and reads
// its Prometheus /metrics.
package daemontest

import (
	"bufio"
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
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Process is a started binary.
type Process struct {
	Cmd     *exec.Cmd
	LogPath string
}

// logTail is how much of a failed test's process log is printed.
const logTail = 8000

// Start runs bin with args, with KUBECONFIG unset so only the flags say
// where the apiserver is, and stdout and stderr in a log file. At the end
// of the test the process gets SIGTERM and is waited for; when the test
// failed, the end of its log is printed.
func Start(tb testing.TB, bin string, args ...string) *Process {
	tb.Helper()
	logPath := filepath.Join(tb.TempDir(), filepath.Base(bin)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		logFile.Close()
		if tb.Failed() {
			out, _ := os.ReadFile(logPath)
			if len(out) > logTail {
				out = out[len(out)-logTail:]
			}
			tb.Logf("%s log (end):\n%s", filepath.Base(bin), out)
		}
	})
	return &Process{Cmd: cmd, LogPath: logPath}
}

// Scrape reads a Prometheus text exposition into "name{labels}" -> value.
func Scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
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
