package logging

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
)

// New returns a text logger on stderr at level ("debug", "info", "warn",
// "error") with component=name on every record, and makes it the default.
func New(level, component string) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "", "info":
		l = slog.LevelInfo
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, fmt.Errorf("unknown log level %q: want debug, info, warn or error", level)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})).With("component", component)
	slog.SetDefault(log)
	return log, nil
}

// ParseLevel maps a -v flag value to a level name for New: a name
// (debug, info, warn, warning, error) or one of kube's verbosity numbers
// (0-3 info, 4 and more debug), so manifests written for Kubernetes
// (--v=2) start.
func ParseLevel(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		if n >= 4 {
			return "debug", nil
		}
		return "info", nil
	}
	switch l := strings.ToLower(s); l {
	case "debug", "info", "warn", "warning", "error":
		return l, nil
	}
	return "", fmt.Errorf("unknown log level %q: want debug, info, warn, error or a number", s)
}
