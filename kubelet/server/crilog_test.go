package server

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 17, 0, 0, 123456789, time.UTC)

func TestParseCRILine(t *testing.T) {
	t.Parallel()
	type rec struct {
		Time    time.Time
		Stream  string
		Partial bool
		Content []byte
	}
	tests := []struct {
		line    string
		want    rec
		wantErr bool
	}{
		{line: "2026-12-02T17:00:00.123456789Z stdout F the line", want: rec{Time: t0, Stream: "stdout", Content: []byte("the line")}},
		{line: "2026-12-02T17:00:00.123456789Z stderr P part", want: rec{Time: t0, Stream: "stderr", Partial: true, Content: []byte("part")}},
		{line: "2026-12-02T17:00:00.123456789Z stdout F ", want: rec{Time: t0, Stream: "stdout", Content: []byte("")}},
		{line: "2026-12-02T17:00:00.123456789Z stdout F", want: rec{Time: t0, Stream: "stdout"}},
		{line: "2026-12-02T17:00:00.123456789Z stdout F  two  spaces ", want: rec{Time: t0, Stream: "stdout", Content: []byte(" two  spaces ")}},
		{line: "2026-12-02T17:00:00.123456789+01:00 stdout F:x tz", want: rec{Time: t0.Add(-time.Hour), Stream: "stdout", Content: []byte("tz")}},
		{line: "not-a-time stdout F x", wantErr: true},
		{line: "2026-12-02T17:00:00Z stdin F x", wantErr: true},
		{line: "2026-12-02T17:00:00Z stdout X x", wantErr: true},
		{line: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseCRILine([]byte(tt.line))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseCRILine(%q) error = %v, want error %v", tt.line, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		gotTime, terr := got.Time()
		if terr != nil || !gotTime.Equal(tt.want.Time) || got.Stream != tt.want.Stream || got.Partial != tt.want.Partial || !bytes.Equal(got.Content, tt.want.Content) {
			t.Errorf("parseCRILine(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
	// What FormatCRILine writes parses back.
	line := FormatCRILine(t0, "stderr", true, []byte("round trip"))
	got, err := parseCRILine(bytes.TrimSuffix(line, []byte("\n")))
	gotTime, _ := got.Time()
	if err != nil || !got.Partial || string(got.Content) != "round trip" || got.Stream != "stderr" || !gotTime.Equal(t0) {
		t.Errorf("round trip of %q = %+v, %v", line, got, err)
	}
}

// writeLog writes records as a CRI log file, one second apart from t0.
func writeLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for i, l := range lines {
		partial := strings.HasSuffix(l, "\\")
		b = append(b, FormatCRILine(t0.Add(time.Duration(i)*time.Second), "stdout", partial, []byte(strings.TrimSuffix(l, "\\")))...)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.Write(FormatCRILine(time.Now(), "stdout", false, []byte(l))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStreamLogOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLog(t, logPath(dir, 0), "one", "two", "thr\\", "ee", "four")
	ts := func(i int) string { return t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano) }
	tests := []struct {
		name string
		opts LogOptions
		want string
	}{
		{"all", LogOptions{TailLines: -1}, "one\ntwo\nthree\nfour\n"},
		{"tail 2", LogOptions{TailLines: 2}, "ee\nfour\n"},
		{"tail 1", LogOptions{TailLines: 1}, "four\n"},
		{"tail 0", LogOptions{TailLines: 0}, ""},
		{"tail more than there is", LogOptions{TailLines: 100}, "one\ntwo\nthree\nfour\n"},
		{"limitBytes", LogOptions{TailLines: -1, LimitBytes: 6}, "one\ntw"},
		{"timestamps", LogOptions{TailLines: 2, Timestamps: true}, ts(3) + " ee\n" + ts(4) + " four\n"},
		{"timestamps on a partial line once", LogOptions{TailLines: 3, Timestamps: true}, ts(2) + " three\n" + ts(4) + " four\n"},
		{"since", LogOptions{TailLines: -1, Since: t0.Add(3500 * time.Millisecond)}, "four\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := streamLog(context.Background(), dir, 0, tt.opts, &logWriter{w: &out, opts: tt.opts},
				follower{done: func() bool { return true }, flush: func() {}, log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestTailOffsetLargeFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	for i := 0; i < 3000; i++ {
		lines = append(lines, strings.Repeat("x", i%50)+"|"+string(rune('a'+i%26)))
	}
	writeLog(t, logPath(dir, 0), lines...)
	opts := LogOptions{TailLines: 1500}
	var out bytes.Buffer
	if err := streamLog(context.Background(), dir, 0, opts, &logWriter{w: &out, opts: opts},
		follower{done: func() bool { return true }, flush: func() {}, log: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != 1500 || got[0] != lines[1500] || got[1499] != lines[2999] {
		t.Errorf("tail 1500 of 3000: %d lines, first %q (want %q)", len(got), got[0], lines[1500])
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
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

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStreamLogFollowAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLog(t, logPath(dir, 0), "first run")
	var out syncBuffer
	var finished sync.WaitGroup
	var done sync.Mutex
	isDone := false
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := LogOptions{Follow: true, TailLines: -1}
	finished.Add(1)
	var streamErr error
	go func() {
		defer finished.Done()
		streamErr = streamLog(ctx, dir, 0, opts, &logWriter{w: &out, opts: opts}, follower{
			switchFiles: true, poll: 10 * time.Millisecond, flush: func() {}, log: slog.New(slog.DiscardHandler),
			done: func() bool { done.Lock(); defer done.Unlock(); return isDone },
		})
	}()
	waitFor(t, "the existing line", func() bool { return out.String() == "first run\n" })
	appendLog(t, logPath(dir, 0), "appended")
	waitFor(t, "the appended line", func() bool { return out.String() == "first run\nappended\n" })

	// A line written in two pieces is only sent once complete.
	f, err := os.OpenFile(logPath(dir, 0), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	full := FormatCRILine(time.Now(), "stdout", false, []byte("split write"))
	if _, err := f.Write(full[:20]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if strings.Contains(out.String(), "split") {
		t.Fatalf("half a CRI line was parsed: %q", out.String())
	}
	if _, err := f.Write(full[20:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	waitFor(t, "the split line", func() bool { return strings.HasSuffix(out.String(), "split write\n") })

	// The container restarts: the next run's file is followed.
	writeLog(t, logPath(dir, 1), "second run")
	waitFor(t, "the restarted container's line", func() bool { return strings.HasSuffix(out.String(), "split write\nsecond run\n") })
	appendLog(t, logPath(dir, 1), "more")
	waitFor(t, "more", func() bool { return strings.HasSuffix(out.String(), "second run\nmore\n") })

	// The container is done: the stream ends by itself.
	done.Lock()
	isDone = true
	done.Unlock()
	finished.Wait()
	if streamErr != nil || ctx.Err() != nil {
		t.Fatalf("stream ended with %v (ctx %v)", streamErr, ctx.Err())
	}
}

func TestLogFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"10.log", "2.log", "0.log", "x.log", "3.log.gz", "-1.log"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := logFiles(dir)
	if err != nil || len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 10 {
		t.Errorf("logFiles = %v, %v; want [0 2 10]", got, err)
	}
}
