package cri_test

import (
	"bytes"
	"io"
	osexec "os/exec"
	"sync"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
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

func ioPipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }

func exec(name string, args ...string) error { return osexec.Command(name, args...).Run() }
