package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stream names of the CRI log format.
const (
	streamStdout = "stdout"
	streamStderr = "stderr"
)

// Tags of the CRI log format: a full line, or a partial one continued by
// the next record.
const (
	tagFull    = "F"
	tagPartial = "P"
)

// logRecord is one line of a CRI log file:
// "2026-12-02T17:00:00.123456789Z stdout F the line".
type logRecord struct {
	// RawTime is the timestamp as written; Time parses it (the kubelet
	// runtime writes RFC3339Nano in UTC, which is also what clients get).
	RawTime []byte
	Stream  string
	Partial bool
	Content []byte // without the trailing newline
}

// Time parses the record's timestamp.
func (r logRecord) Time() (time.Time, error) { return time.Parse(time.RFC3339Nano, string(r.RawTime)) }

// parseCRILine parses one CRI log line (without its newline).
func parseCRILine(line []byte) (logRecord, error) {
	var r logRecord
	ts, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return r, fmt.Errorf("invalid CRI log line %q: no timestamp", truncate(line))
	}
	// The timestamp is only checked for shape here; parsing it costs more
	// than the rest of the line and is only needed for sinceSeconds.
	if len(ts) < len("2006-01-02T15:04:05Z") || ts[4] != '-' || ts[10] != 'T' {
		return r, fmt.Errorf("invalid CRI log line %q: bad timestamp", truncate(line))
	}
	stream, rest, ok := bytes.Cut(rest, []byte(" "))
	if !ok || (string(stream) != streamStdout && string(stream) != streamStderr) {
		return r, fmt.Errorf("invalid CRI log line %q: bad stream", truncate(line))
	}
	tag, content, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		// "TS stdout F" with empty content.
		tag, content = rest, nil
	}
	// Tags may carry more fields separated by ':'; the first is P or F.
	first, _, _ := bytes.Cut(tag, []byte(":"))
	switch string(first) {
	case tagFull:
	case tagPartial:
		r.Partial = true
	default:
		return r, fmt.Errorf("invalid CRI log line %q: bad tag %q", truncate(line), tag)
	}
	r.RawTime, r.Content = ts, content
	switch string(stream) { // no allocation for the two known streams
	case streamStdout:
		r.Stream = streamStdout
	default:
		r.Stream = streamStderr
	}
	return r, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// FormatCRILine formats one CRI log line, newline included; the kubelet
// runtime writes container output this way.
func FormatCRILine(t time.Time, stream string, partial bool, content []byte) []byte {
	tag := tagFull
	if partial {
		tag = tagPartial
	}
	b := make([]byte, 0, len(content)+48)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, ' ')
	b = append(b, stream...)
	b = append(b, ' ')
	b = append(b, tag...)
	b = append(b, ' ')
	b = append(b, content...)
	return append(b, '\n')
}

// LogOptions are the kubelet's /containerLogs query.
type LogOptions struct {
	Follow     bool
	Previous   bool
	Timestamps bool
	// TailLines < 0 means all.
	TailLines int64
	// LimitBytes <= 0 means no limit.
	LimitBytes int64
	// Since, when not zero, skips records before it.
	Since time.Time
}

// logWriter turns records into what a client of pods/log reads: the
// content, a newline after full lines, optionally the timestamp first,
// and stops at LimitBytes.
type logWriter struct {
	w       io.Writer
	opts    LogOptions
	written int64
	midLine bool // the last record was partial: no timestamp before its continuation
	buf     []byte
}

var errLimitReached = errors.New("limitBytes reached")

func (lw *logWriter) write(r logRecord) error {
	if !lw.opts.Since.IsZero() {
		t, err := r.Time()
		if err != nil || t.Before(lw.opts.Since) {
			return nil
		}
	}
	b := lw.buf[:0]
	if lw.opts.Timestamps && !lw.midLine {
		if t, err := r.Time(); err == nil {
			b = t.UTC().AppendFormat(b, time.RFC3339Nano)
		} else {
			b = append(b, r.RawTime...)
		}
		b = append(b, ' ')
	}
	b = append(b, r.Content...)
	if !r.Partial {
		b = append(b, '\n')
	}
	lw.midLine = r.Partial
	if lw.opts.LimitBytes > 0 {
		left := lw.opts.LimitBytes - lw.written
		if int64(len(b)) >= left {
			b = b[:left]
			_, err := lw.w.Write(b)
			lw.written += int64(len(b))
			if err != nil {
				return err
			}
			return errLimitReached
		}
	}
	n, err := lw.w.Write(b)
	lw.written += int64(n)
	lw.buf = b
	return err
}

// logFiles lists a container's log files by restart count, ascending.
func logFiles(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".log") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(name, ".log"))
		if err != nil || n < 0 {
			continue
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out, nil
}

func logPath(dir string, restart int) string {
	return filepath.Join(dir, strconv.Itoa(restart)+".log")
}

// tailOffset returns the offset where the last n lines of f start (kube's
// tail: lines of the file counted from its end); n < 0 means all.
func tailOffset(f *os.File, n int64) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	switch {
	case n < 0:
		return 0, nil
	case n == 0:
		return size, nil
	}
	const block = 4096
	buf := make([]byte, block)
	var count int64
	for pos := size; pos > 0; {
		from := max(pos-block, 0)
		chunk := buf[:pos-from]
		if _, err := f.ReadAt(chunk, from); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			// The newline ending the last line does not start another one.
			if abs := from + int64(i); chunk[i] == '\n' && abs != size-1 {
				if count++; count == n {
					return abs + 1, nil
				}
			}
		}
		pos = from
	}
	return 0, nil
}
