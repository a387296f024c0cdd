package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
)

// BenchmarkListProfile profiles the apiserver (in this process) behind a
// LIST of 8,000 pods: it creates them over HTTPS as benchUser, writes the
// heap profile once they are in the watch cache (heap.pprof), then a CPU
// profile of 20 lists from the watch cache (list-cpu.pprof, JSON then
// protobuf), into MINIK8S_PROFILE_DIR; it is skipped without it. The
// apiserver itself serves no profiling endpoint.
func BenchmarkListProfile(b *testing.B) {
	dir := os.Getenv("MINIK8S_PROFILE_DIR")
	if dir == "" {
		b.Skip("MINIK8S_PROFILE_DIR is not set")
	}
	e := benchServer(b)
	url := e.secureURL + "/api/v1/namespaces/default/pods"
	var n atomic.Int64
	const total = 8000
	if err := fill(total, 64, func() error { return post(e.hc, url, podBody(fmt.Sprintf("p-%d", n.Add(1)))) }); err != nil {
		b.Fatal(err)
	}
	list := func(accept string) {
		req, _ := http.NewRequest(http.MethodGet, url+"?resourceVersion=0", nil)
		req.Header.Set("Accept", accept)
		resp, err := e.hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(data) < total*100 {
			b.Fatalf("list: %d %q", resp.StatusCode, data[:min(len(data), 200)])
		}
	}
	writeProfile := func(name string, f func(io.Writer) error) {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	writeProfile("heap.pprof", func(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) })
	// One list of each first: protobuf conversions are made once per object.
	list("application/json")
	list(protobufType)
	var cpu bytes.Buffer
	if err := pprof.StartCPUProfile(&cpu); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		for range 10 {
			list("application/json")
		}
		for range 10 {
			list(protobufType)
		}
	}
	pprof.StopCPUProfile()
	writeProfile("list-cpu.pprof", func(w io.Writer) error { _, err := w.Write(cpu.Bytes()); return err })
	runtime.GC()
	writeProfile("heap-after-lists.pprof", func(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) })
}
