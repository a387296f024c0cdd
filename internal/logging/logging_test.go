package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want slog.Level
		err  bool
	}{
		{"debug", slog.LevelDebug, false}, {"info", slog.LevelInfo, false}, {"WARN", slog.LevelWarn, false},
		{"warning", slog.LevelWarn, false}, {"error", slog.LevelError, false},
		{"2", 0, true}, {"loud", 0, true}, {"", 0, true},
	} {
		got, err := ParseLevel(tc.in)
		if (err != nil) != tc.err || (err == nil && got != tc.want) {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestVerbosityLevel(t *testing.T) {
	for _, tc := range []struct {
		v          int
		debugShown bool
	}{{0, false}, {2, false}, {3, false}, {4, true}, {10, true}} {
		if got := VerbosityLevel(tc.v) <= slog.LevelDebug; got != tc.debugShown {
			t.Errorf("--v=%d: debug records shown = %v, want %v", tc.v, got, tc.debugShown)
		}
		if VerbosityLevel(tc.v) > slog.LevelInfo {
			t.Errorf("--v=%d hides info records", tc.v)
		}
	}
}

func TestNewFormats(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var text, js bytes.Buffer
	log, err := New(&text, slog.LevelInfo, "text", "test")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.Info("shown", "k", "v")
	if got := text.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "msg=shown component=test k=v") {
		t.Errorf("text log = %q", got)
	}
	if log, err = New(&js, slog.LevelDebug, "json", "test"); err != nil {
		t.Fatal(err)
	}
	log.Debug("shown")
	var rec map[string]any
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil || rec["msg"] != "shown" || rec["component"] != "test" {
		t.Errorf("json log = %q (%v)", js.String(), err)
	}
	if _, err := New(&text, slog.LevelInfo, "xml", "test"); err == nil {
		t.Error("New(format xml) accepted")
	}
}
