package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkList10kPodsTable measures a LIST of 10,000 pods as kubectl get
// asks for it: a meta.k8s.io Table whose rows carry the pods' metadata
// (kubectl's default), and the same with whole objects (kubectl's
// --sort-by), over HTTPS as benchUser from the watch cache; p50 and p99
// per list beside the mean.
func BenchmarkList10kPodsTable(b *testing.B) {
	e := benchServer(b)
	hc := e.hc
	url := e.secureURL + "/api/v1/namespaces/default/pods"
	var n atomic.Int64
	const total = 10000
	if err := fill(total, 64, func() error { return post(hc, url, podBody(fmt.Sprintf("t-%d", n.Add(1)))) }); err != nil {
		b.Fatal(err)
	}
	for _, include := range []string{"Metadata", "Object"} {
		b.Run("pods=10000/includeObject="+include, func(b *testing.B) {
			var size int
			took := make([]float64, 0, b.N)
			for range b.N {
				req, _ := http.NewRequest(http.MethodGet, e.secureURL+"/api/v1/pods?includeObject="+include, nil)
				req.Header.Set("Accept", kubectlAccept)
				start := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took = append(took, float64(time.Since(start))/float64(time.Millisecond))
				size = len(data)
				if resp.StatusCode != 200 || !bytes.Contains(data[:min(len(data), 200)], []byte(`"kind":"Table"`)) {
					b.Fatalf("list: %d %.200s", resp.StatusCode, data)
				}
			}
			slices.Sort(took)
			b.ReportMetric(took[len(took)/2], "p50-ms")
			b.ReportMetric(took[(len(took)*99)/100], "p99-ms")
			b.ReportMetric(float64(size)/(1<<20), "MiB/list")
		})
	}
}
