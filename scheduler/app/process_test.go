package app_test

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
	"time"
)

// schedulerProcess is the real scheduler binary running against an
// apiserver, with its metrics on a loopback port.
type schedulerProcess struct {
	cmd     *exec.Cmd
	metrics string
}

func buildScheduler(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scheduler")
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/minik8s/minik8s/scheduler").CombinedOutput()
	if err != nil {
		t.Fatalf("build scheduler: %v\n%s", err, out)
	}
	return bin
}

func startProcess(t *testing.T, bin, url string, qps int) *schedulerProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--master", url, "--bind-address", "127.0.0.1", "--port", strconv.Itoa(port),
		"--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", "1", "--v", "2",
		"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "200ms",
		"--pod-initial-backoff", "100ms", "--pod-max-backoff", "1s")
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	logPath := filepath.Join(t.TempDir(), "scheduler.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("scheduler log:\n%s", out)
		}
	})
	return &schedulerProcess{cmd: cmd, metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}
}

// counter reads one sample of the process's /metrics (0 when absent).
func (p *schedulerProcess) counter(t *testing.T, sample string) float64 {
	t.Helper()
	resp, err := http.Get(p.metrics)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// A scheduler process killed with SIGKILL in the middle of a burst keeps
// its lease until it expires; the next process then takes over and binds
// exactly the pods left, every one once.
func TestSchedulerProcessKilledMidBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the scheduler binary")
	}
	bin := buildScheduler(t)
	cl := newCluster(t, 4)
	first := startProcess(t, bin, cl.url, 20) // slow, so the burst outlives it
	cl.createPods("burst", 200)
	cl.waitBound(15)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.cmd.Process.Wait()
	// A binding sent before the kill may still land; let those settle.
	time.Sleep(time.Second)
	boundAtKill, _ := cl.bound()
	if boundAtKill >= 200 {
		t.Fatal("the first scheduler finished the burst before it was killed")
	}
	second := startProcess(t, bin, cl.url, 500)
	cl.waitBound(200)
	time.Sleep(500 * time.Millisecond)
	scheduled := second.counter(t, `scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}`)
	errors := second.counter(t, `scheduler_schedule_attempts_total{profile="default-scheduler",result="error"}`)
	if int(scheduled) != 200-boundAtKill || errors != 0 {
		t.Fatalf("second scheduler: %v bindings, %v errors; want %d bindings (the pods left) and none refused", scheduled, errors, 200-boundAtKill)
	}
	t.Logf("first scheduler bound %d before SIGKILL; the second bound the other %d", boundAtKill, int(scheduled))
}
