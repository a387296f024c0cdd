package logging

import (
	"fmt"
	"log/slog"
	"os"
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
