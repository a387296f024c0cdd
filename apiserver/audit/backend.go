package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"
)

// Backend writes events as JSON lines. It is safe for concurrent use: each
// event is one Write under a mutex, so lines never interleave.
type Backend struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer
	log    *slog.Logger
}

// NewFileBackend appends events to path, like --audit-log-path: "-" is
// standard output. With maxSizeMB > 0 the file is rotated when it would grow
// past that size (like --audit-log-maxsize; rotated files are kept beside it
// as NAME-TIMESTAMP.EXT); with 0 it grows without limit.
func NewFileBackend(path string, maxSizeMB int) (*Backend, error) {
	if path == "" {
		return nil, errors.New("audit log path is empty")
	}
	if path == "-" {
		return NewBackend(os.Stdout), nil
	}
	if maxSizeMB < 0 {
		return nil, fmt.Errorf("audit log max size %d MB: must not be negative", maxSizeMB)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log directory: %w", err)
	}
	if maxSizeMB == 0 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open audit log: %w", err)
		}
		b := NewBackend(f)
		b.closer = f
		return b, nil
	}
	// Open (and so check) the file now rather than at the first event.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	_ = f.Close()
	lj := &lumberjack.Logger{Filename: path, MaxSize: maxSizeMB}
	b := NewBackend(lj)
	b.closer = lj
	return b, nil
}

// NewBackend writes events to w.
func NewBackend(w io.Writer) *Backend {
	return &Backend{w: w, log: slog.Default().With("component", "audit")}
}

// Process writes ev as one line. A failure is logged, never returned: an
// audit problem must not fail the request it describes.
func (b *Backend) Process(ev *Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		b.log.Error("encode audit event", "auditID", ev.AuditID, "err", err)
		return
	}
	data = append(data, '\n')
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		b.log.Error("audit event after close", "auditID", ev.AuditID, "verb", ev.Verb, "uri", ev.RequestURI)
		return
	}
	if _, err := b.w.Write(data); err != nil {
		b.log.Error("write audit event", "auditID", ev.AuditID, "verb", ev.Verb, "uri", ev.RequestURI, "err", err)
	}
}

// Close closes the file. Events processed afterwards are logged as lost.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.w = nil
	if b.closer == nil {
		return nil
	}
	err := b.closer.Close()
	b.closer = nil
	return err
}
