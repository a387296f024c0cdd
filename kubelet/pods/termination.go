package pods

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// Kube's limits on a termination message: what is read of the file, and
// of the log's end when the policy falls back to it.
const (
	maxTerminationMessageLength    = 4 * 1024
	maxTerminationMessageLogLines  = 80
	maxTerminationMessageLogLength = 2 * 1024
)

// terminationLogPath is the host file bind-mounted at the container's
// terminationMessagePath, one per instance (kube's kubelet keeps them
// under the pod's containers directory too).
func (m *Manager) terminationLogPath(pod *api.Pod, name string, restartCount int) string {
	return filepath.Join(m.podDir(string(pod.UID)), "containers", name, strconv.Itoa(restartCount))
}

// terminationLogMount makes the instance's empty termination log, writable
// by any user the container runs as, and returns its mount; none when the
// container has no terminationMessagePath.
func (m *Manager) terminationLogMount(pod *api.Pod, c *api.Container, restartCount int) ([]runtime.Mount, error) {
	if c.TerminationMessagePath == "" {
		return nil, nil
	}
	p := m.terminationLogPath(pod, c.Name, restartCount)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p, nil, 0o666); err != nil {
		return nil, err
	}
	if err := os.Chmod(p, 0o666); err != nil { // past the umask
		return nil, err
	}
	return []runtime.Mount{{HostPath: p, ContainerPath: c.TerminationMessagePath}}, nil
}

// terminationMessage is what kube's kubelet reports as an exited
// container's message: its termination log (up to 4 KiB), or, when that
// is empty, the policy is FallbackToLogsOnError and the exit code is not
// 0, the end of its log (80 lines, 2 KiB).
func (m *Manager) terminationMessage(pod *api.Pod, c *api.Container, inst *runtime.Container) string {
	if c == nil {
		return ""
	}
	fallback := c.TerminationMessagePolicy == api.TerminationMessageFallbackToLogsOnError && inst.ExitCode != 0
	if c.TerminationMessagePath != "" {
		p := m.terminationLogPath(pod, c.Name, inst.RestartCount)
		data, err := readAtMost(p, maxTerminationMessageLength)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Sprintf("Error on reading termination log %s: %v", p, err)
		case len(data) > 0:
			return string(data)
		}
	}
	if !fallback {
		return ""
	}
	return logTail(LogPath(m.opts.LogsDir, pod, c.Name, inst.RestartCount))
}

// readAtMost reads the last max bytes of a file.
func readAtMost(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// logTail is the content of the last lines of a CRI log file
// ("TIME STREAM TAG CONTENT"), at most 80 lines and 2 KiB, as kube's
// readLastStringFromContainerLogs; "" when there is no log.
func logTail(p string) string {
	data, err := readAtMost(p, 64*1024)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) > maxTerminationMessageLogLines {
		lines = lines[len(lines)-maxTerminationMessageLogLines:]
	}
	var out []byte
	for _, l := range lines {
		f := bytes.SplitN(l, []byte(" "), 4)
		if len(f) < 3 {
			continue
		}
		if len(f) == 4 {
			out = append(out, f[3]...)
		}
		if !bytes.HasPrefix(f[2], []byte("P")) {
			out = append(out, '\n')
		}
	}
	if len(out) > maxTerminationMessageLogLength {
		out = out[len(out)-maxTerminationMessageLogLength:]
	}
	return string(out)
}
