package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Formats are the values of --logging-format: kube's "text" (here slog's
// key=value lines) and "json".
var Formats = []string{"text", "json"}

// New returns a logger writing to w (a daemon's stderr) at level, in
// format ("text" or "json"), with component=name on every record, and
// makes it the default.
func New(w io.Writer, level slog.Level, format, component string) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch format {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("unknown logging format %q: want %s", format, strings.Join(Formats, " or "))
	}
	log := slog.New(h).With("component", component)
	slog.SetDefault(log)
	return log, nil
}

// ParseLevel maps a --log-level name (debug, info, warn or warning, error)
// to its level.
func ParseLevel(name string) (slog.Level, error) {
	switch strings.ToLower(name) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q: want debug, info, warn or error", name)
}

// VerbosityLevel maps kube's --v=N to a level the way logr's slog bridge
// does: V(n) logs at level -n, so --v=0 to 3 keep Debug records out and
// --v=4 (slog.LevelDebug is -4) and more let them in.
func VerbosityLevel(v int) slog.Level {
	return slog.Level(-v)
}
