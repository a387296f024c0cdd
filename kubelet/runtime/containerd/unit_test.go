package runtime

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStreamWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	lf, err := openLogFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lf.now = func() time.Time { return time.Date(2026, 12, 2, 17, 0, 0, 123456789, time.UTC) }
	w := &streamWriter{log: lf, stream: "stdout"}
	for _, chunk := range []string{"hel", "lo\nwor", "ld\r\n", strings.Repeat("x", maxLogLine+3)} {
		_, _ = w.Write([]byte(chunk))
	}
	w.Flush()
	lf.Close()
	b, _ := os.ReadFile(path)
	ts := "2026-12-02T17:00:00.123456789Z"
	want := ts + " stdout F hello\n" + ts + " stdout F world\n" + ts + " stdout P " + strings.Repeat("x", maxLogLine) + "\n" + ts + " stdout F xxx\n"
	if string(b) != want {
		t.Errorf("log:\n%q\nwant\n%q", b, want)
	}
}

func TestProcessArgs(t *testing.T) {
	ep, cmd := []string{"/entry"}, []string{"default"}
	tests := []struct {
		command, args, want []string
	}{
		{nil, nil, []string{"/entry", "default"}},
		{nil, []string{"a"}, []string{"/entry", "a"}},
		{[]string{"sh"}, nil, []string{"sh"}},
		{[]string{"sh"}, []string{"-c", "x"}, []string{"sh", "-c", "x"}},
	}
	for _, tt := range tests {
		if got := processArgs(ep, cmd, tt.command, tt.args); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("processArgs(%v, %v) = %v, want %v", tt.command, tt.args, got, tt.want)
		}
	}
}

func TestImageNames(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                    "docker.io/library/busybox:latest",
		"127.0.0.1:5000/a/b:v1":      "127.0.0.1:5000/a/b:v1",
		"minik8s.local/busybox":      "minik8s.local/busybox:latest",
		"registry.k8s.io/pause:3.10": "registry.k8s.io/pause:3.10",
	} {
		if got, err := NormalizeImage(in); err != nil || got != want {
			t.Errorf("NormalizeImage(%q) = %q %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]bool{"busybox": true, "busybox:latest": true, "busybox:1.36": false, "busybox@sha256:" + strings.Repeat("a", 64): false} {
		if got := IsLatest(in); got != want {
			t.Errorf("IsLatest(%q) = %v", in, got)
		}
	}
	if got := ImageID("127.0.0.1:5000/a/b:v1", "sha256:abc"); got != "127.0.0.1:5000/a/b@sha256:abc" {
		t.Errorf("ImageID %q", got)
	}
	if _, err := NormalizeImage("no spaces allowed"); err == nil {
		t.Error("invalid image accepted")
	}
}
