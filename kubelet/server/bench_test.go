package server_test

import (
	"bytes"
	"io"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
	"github.com/minik8s/minik8s/kubelet/server"
)

// BenchmarkLogsThroughAPIServer reads a 4 MiB container log (about 40000
// lines) through apiserver and kubelet, reporting MB/s.
func BenchmarkLogsThroughAPIServer(b *testing.B) {
	e := setup(b)
	p := e.pod(b, "big", "node-k", "app")
	path := e.logFile(p, "app", 0)
	writeCRI(b, path) // creates the directory
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 100))
	var size int64
	now := time.Now()
	for size < 4<<20 {
		rec := server.FormatCRILine(now, "stdout", false, line)
		_, _ = f.Write(rec)
		size += int64(len(line) + 1)
	}
	f.Close()
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		body, err := e.admin.Stream(e.ctx, client.Request{Path: "/api/v1/namespaces/default/pods/big/log"})
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, body)
		body.Close()
		if n != size {
			b.Fatalf("read %d bytes, want %d", n, size)
		}
	}
}

// BenchmarkTailThroughAPIServer is `logs --tail=10` of the same 4 MiB log:
// the cost should not grow with the file.
func BenchmarkTailThroughAPIServer(b *testing.B) {
	e := setup(b)
	p := e.pod(b, "big", "node-k", "app")
	var lines []string
	for range 40000 {
		lines = append(lines, strings.Repeat("y", 100))
	}
	writeCRI(b, e.logFile(p, "app", 0), lines...)
	q := url.Values{"tailLines": {"10"}}
	b.ResetTimer()
	for b.Loop() {
		out, err := e.admin.Do(e.ctx, client.Request{Path: "/api/v1/namespaces/default/pods/big/log", Query: q})
		if err != nil || bytes.Count(out, []byte("\n")) != 10 {
			b.Fatalf("tail: %d lines, %v", bytes.Count(out, []byte("\n")), err)
		}
	}
}

// BenchmarkExecThroughAPIServer is one exec session (WebSocket upgrade
// through the apiserver to the kubelet, a command, its result).
func BenchmarkExecThroughAPIServer(b *testing.B) {
	e := setup(b)
	e.pod(b, "shell", "node-k", "main")
	q := url.Values{"command": {"echo", "x"}, "stdout": {"true"}}
	b.ResetTimer()
	for b.Loop() {
		if err := remotecommand.Exec(e.ctx, e.adminCC, "/api/v1/namespaces/default/pods/shell/exec", q, remotecommand.Options{Stdout: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogsDirect reads the same 4 MiB log from the kubelet itself, as
// the apiserver does, to show what the proxy adds.
func BenchmarkLogsDirect(b *testing.B) {
	e := setup(b)
	p := e.pod(b, "big", "node-k", "app")
	var lines []string
	for range 40000 {
		lines = append(lines, strings.Repeat("x", 100))
	}
	writeCRI(b, e.logFile(p, "app", 0), lines...)
	hc := e.kubeletClient(b)
	b.SetBytes(40000 * 101)
	b.ResetTimer()
	for b.Loop() {
		resp, err := hc.Get(e.kubelet + "/containerLogs/default/big/app")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != 40000*101 {
			b.Fatalf("read %d", n)
		}
	}
}
