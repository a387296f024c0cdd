package benchproc

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a child process whose output goes to a log file in the
// run's work directory.
type Process struct {
	Name   string
	Log    string
	cmd    *exec.Cmd
	exited chan error
}

// Start runs bin with args, logging to DIR/NAME.log.
func Start(dir, name, bin string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Killed with this program, whichever way it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, Log: logPath, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait(); f.Close() }()
	slog.Info("started", "process", name, "pid", cmd.Process.Pid, "log", logPath)
	return p, nil
}

// PID is the process' ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Alive says whether the process still runs, and if not, why it ended with
// the tail of its log.
func (p *Process) Alive() error {
	select {
	case err := <-p.exited:
		p.exited <- err
		return fmt.Errorf("%s exited: %v\n%s", p.Name, err, Tail(p.Log, 2000))
	default:
		return nil
	}
}

// Stop ends the process (SIGINT, then SIGKILL after 10 s) and waits.
func (p *Process) Stop() {
	if p.Alive() != nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Kill sends SIGKILL, as a machine lost at once, and waits for the exit.
func (p *Process) Kill() {
	if p.Alive() != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	err := <-p.exited
	p.exited <- err
}

// Tail is the last n bytes of the file at path.
func Tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}

// RSSMiB is the process' resident set (VmRSS) and its high-water mark
// (VmHWM), in MiB; zero when the process is gone.
func RSSMiB(pid int) (rss, peak float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}

// AnonMiB is the process' anonymous resident memory (RssAnon: heap and
// stacks, not the binary's file pages), in MiB.
func AnonMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "RssAnon:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// CPUSeconds is the process' user and system CPU time so far.
func CPUSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTicks
}

// FreePort is a loopback TCP port free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
