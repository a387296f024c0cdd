package containerd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// maxLogLine is the longest line written as one record; longer lines are
// split into partial ("P") records, as containerd's CRI plugin does.
const maxLogLine = 16 * 1024

// logFile appends CRI-format records ("<RFC3339Nano> <stream> <F|P> <text>")
// for a container's stdout and stderr to one file.
type logFile struct {
	mu  sync.Mutex
	f   *os.File
	now func() time.Time
}

func openLogFile(path string) (*logFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	return &logFile{f: f, now: time.Now}, nil
}

func (l *logFile) record(stream string, tag byte, line []byte) {
	var b bytes.Buffer
	b.WriteString(l.now().UTC().Format(time.RFC3339Nano))
	b.WriteByte(' ')
	b.WriteString(stream)
	b.WriteByte(' ')
	b.WriteByte(tag)
	b.WriteByte(' ')
	b.Write(line)
	b.WriteByte('\n')
	l.mu.Lock()
	_, _ = l.f.Write(b.Bytes())
	l.mu.Unlock()
}

func (l *logFile) Close() error { return l.f.Close() }

// streamWriter turns one output stream into CRI records: every complete line
// is an "F" record; an over-long line becomes "P" records; what is left
// without a newline when the stream ends is flushed as a "P" record, as
// containerd's CRI plugin writes it (so `echo -n DONE` logs "DONE", and a
// FallbackToLogsOnError termination message is "DONE", with no newline).
type streamWriter struct {
	log    *logFile
	stream string
	buf    []byte
}

func (w *streamWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSuffix(w.buf[:i], []byte{'\r'})
		w.log.record(w.stream, 'F', line)
		w.buf = w.buf[i+1:]
	}
	for len(w.buf) >= maxLogLine {
		w.log.record(w.stream, 'P', w.buf[:maxLogLine])
		w.buf = w.buf[maxLogLine:]
	}
	if len(w.buf) == 0 {
		w.buf = nil
	}
	return n, nil
}

// Flush writes a pending unterminated line as a partial record.
func (w *streamWriter) Flush() {
	if len(w.buf) > 0 {
		w.log.record(w.stream, 'P', w.buf)
		w.buf = nil
	}
}

var _ io.Writer = (*streamWriter)(nil)
