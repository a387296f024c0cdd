package containerd

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
	want := ts + " stdout F hello\n" + ts + " stdout F world\n" + ts + " stdout P " + strings.Repeat("x", maxLogLine) + "\n" + ts + " stdout P xxx\n"
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
