package pods

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// termLog is the host file a container's config mounts at path.
func termLog(t *testing.T, cfg runtime.ContainerConfig, path string) string {
	t.Helper()
	for _, mt := range cfg.Mounts {
		if mt.ContainerPath == path {
			return mt.HostPath
		}
	}
	t.Fatalf("no mount at %s in %+v", path, cfg.Mounts)
	return ""
}

// TestFakeTerminationMessage: what a container writes to its
// terminationMessagePath is its terminated state's message (the
// conformance specs "Container Runtime blackbox test on terminated
// container should report termination message ..."); with
// FallbackToLogsOnError an empty file gives the end of the log on a
// failure, nothing on success.
func TestFakeTerminationMessage(t *testing.T) {
	for _, tc := range []struct {
		name, path, written string
		policy              api.TerminationMessagePolicy
		exit                int32
		log, want           string
	}{
		{name: "file", path: "/dev/termination-log", written: "DONE", policy: api.TerminationMessageReadFile, want: "DONE"},
		{name: "non-default-path", path: "/dev/termination-custom-log", written: "DONE", policy: api.TerminationMessageReadFile, exit: 1, want: "DONE"},
		{name: "fallback-on-error", path: "/dev/termination-log", policy: api.TerminationMessageFallbackToLogsOnError, exit: 1,
			log: "2026-12-06T00:00:00.000000000Z stdout F first\n2026-12-06T00:00:00.000000001Z stdout P DO\n2026-12-06T00:00:00.000000002Z stderr F NE\n", want: "first\nDONE\n"},
		{name: "fallback-success", path: "/dev/termination-log", policy: api.TerminationMessageFallbackToLogsOnError,
			log: "2026-12-06T00:00:00.000000000Z stdout F DONE\n", want: ""},
		{name: "file-beats-logs", path: "/dev/termination-log", written: "OK", policy: api.TerminationMessageFallbackToLogsOnError, exit: 2,
			log: "2026-12-06T00:00:00.000000000Z stdout F DONE\n", want: "OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := fakePod("term", api.Container{Name: "main", TerminationMessagePath: tc.path, TerminationMessagePolicy: tc.policy})
			pod.Spec.RestartPolicy = api.RestartPolicyNever
			n := newFakeNode(t, nil, pod)
			n.waitPod("term", "Running", isRunning)
			c := n.rt.Running("term", "main")
			cfg, _ := n.rt.Config(c.ID)
			if tc.written != "" {
				if err := os.WriteFile(termLog(t, cfg, tc.path), []byte(tc.written), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.log != "" {
				if err := os.MkdirAll(filepath.Dir(cfg.LogPath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cfg.LogPath, []byte(tc.log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n.rt.Exit(c.ID, tc.exit, "Completed")
			p := n.waitPod("term", "finished", func(p *api.Pod) bool { return isTerminal(p.Status.Phase) })
			st := statusOf(p, "main")
			if st.State.Terminated == nil || st.State.Terminated.Message != tc.want {
				t.Errorf("terminated state %+v, want message %q", st.State.Terminated, tc.want)
			}
		})
	}
}

func TestLogTailLimits(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString("2026-12-06T00:00:00.000000000Z stdout F line-")
		b.WriteString(strings.Repeat("x", 40))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("\n")
	}
	p := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := logTail(p)
	if len(got) != maxTerminationMessageLogLength || !strings.HasSuffix(got, "line-"+strings.Repeat("x", 40)+"v\n") {
		t.Errorf("logTail: %d bytes ending %q", len(got), got[max(0, len(got)-60):])
	}
}
