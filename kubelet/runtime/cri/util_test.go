package cri_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	osexec "os/exec"
	"sync"
	"testing"
	"time"
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

// hostIP is the node's address toward its default route (not loopback:
// hostPorts are DNATed from the node's own addresses).
func hostIP(t *testing.T) string {
	c, err := net.Dial("udp", "192.0.2.1:9")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

func httpGet(url string) string {
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
