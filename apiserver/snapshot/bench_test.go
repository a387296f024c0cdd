package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// BenchmarkSnapshot10k is issue 28's figure: 10,000 objects saved, restored
// into a new data dir and served again by a new apiserver, every object
// back. It reports the seconds of each step and the file's size (run with
// -benchtime=1x).
func BenchmarkSnapshot10k(b *testing.B) {
	const objects = 10000
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s1 := apiservertest.Start(b)
	c1, err := client.New(&client.Config{Host: s1.URL(), QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := client.Resource[api.Namespace](c1).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "bench"}}); err != nil {
		b.Fatal(err)
	}
	cms := client.Resource[api.ConfigMap](c1).Namespace("bench")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < objects; i += 8 {
				cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"key": fmt.Sprintf("value %d", i)}}
				if _, err := cms.Create(ctx, cm); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		file := filepath.Join(dir, "etcd.db")
		start := time.Now()
		if code, _, errOut := run("snapshot", "save", file, "--cert-dir", s1.Options.CertDir, "--embedded-etcd-client-url", s1.Backend().Endpoints()[0]); code != 0 {
			b.Fatalf("save: %s", errOut)
		}
		saved := time.Since(start)
		start = time.Now()
		dataDir := filepath.Join(dir, "etcd")
		if code, _, errOut := run("snapshot", "restore", file, "--data-dir", dataDir); code != 0 {
			b.Fatalf("restore: %s", errOut)
		}
		restored := time.Since(start)
		start = time.Now()
		opts := s1.Options
		opts.DataDir = dataDir
		// A second server beside the first: its own ports, the same PKI.
		s2 := apiservertest.StartWith(b, opts)
		c2, err := client.New(&client.Config{Host: s2.URL(), QPS: -1})
		if err != nil {
			b.Fatal(err)
		}
		l, err := client.Resource[api.ConfigMap](c2).Namespace("bench").List(ctx, client.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		served := time.Since(start)
		if len(l.Items) != objects {
			b.Fatalf("restored %d config maps, want %d", len(l.Items), objects)
		}
		s2.Shutdown()
		fi, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(saved.Seconds(), "save-s")
		b.ReportMetric(restored.Seconds(), "restore-s")
		b.ReportMetric(served.Seconds(), "start+list-s")
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	}
}
