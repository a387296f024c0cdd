package integration

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// benchPod is the pod of podTemplate as client-go's type, named with a
// placeholder as long as benchName's names, so one encoding serves every
// create of a round in either media type.
func benchPod() *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "NAME_PLACEHOLDER", Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}}}}
}

// benchName is a pod name exactly as long as NAME_PLACEHOLDER.
func benchName(n int64) []byte { return fmt.Appendf(nil, "p-%014d", n) }

// BenchmarkPodCreateProtobuf compares pod creates in protobuf (what
// client-go's typed clients send and ask for) with creates in JSON,
// through the whole request path: HTTPS, a client certificate of
// benchUser, RBAC, admission, etcd, the answer in the request's media
// type. Each iteration runs a round of JSON creates and a round of
// protobuf creates of the same pod (podTemplate) from 64 clients through
// the lean HTTP/1.1 poster against the same apiserver, so a busy machine
// disturbs both alike. It reports the medians over iterations of each
// rate, ratio (protobuf ÷ JSON creates/s of adjacent rounds) and
// cpu-ratio (JSON CPU per create ÷ protobuf CPU per create; below 1,
// protobuf costs more). Use -benchtime Nx (N rounds, e.g. 9x).
func BenchmarkPodCreateProtobuf(b *testing.B) {
	const clients, round = 64, 2000
	const path = "/api/v1/namespaces/default/pods"
	e := benchServer(b)
	jsonBody := podBody("NAME_PLACEHOLDER")
	pbBody := protobufBody(b, benchPod())
	jsonPoster, pbPoster := newSecurePoster(b, e, path), newSecurePoster(b, e, path)
	pbPoster.mediaType = protobufType
	var n atomic.Int64
	create := func(p *poster, body []byte) func() error {
		return func() error {
			return p.post(bytes.Replace(body, []byte("NAME_PLACEHOLDER"), benchName(n.Add(1)), 1))
		}
	}
	createJSON, createPB := create(jsonPoster, jsonBody), create(pbPoster, pbBody)
	measure := func(fn func() error) (perSec float64, cpu time.Duration) {
		start, cpu0 := time.Now(), cpuTime()
		if err := fill(round, clients, fn); err != nil {
			b.Fatal(err)
		}
		return round / time.Since(start).Seconds(), (cpuTime() - cpu0) / round
	}
	measure(createJSON) // warm connections, TLS and caches
	measure(createPB)
	var jsonRates, pbRates, ratios, cpuRatios []float64
	var jsonCPU, pbCPU []float64
	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first, so neither always follows the other.
		var j, p float64
		var jc, pc time.Duration
		if i%2 == 0 {
			j, jc = measure(createJSON)
			p, pc = measure(createPB)
		} else {
			p, pc = measure(createPB)
			j, jc = measure(createJSON)
		}
		jsonRates, pbRates = append(jsonRates, j), append(pbRates, p)
		ratios, cpuRatios = append(ratios, p/j), append(cpuRatios, float64(jc)/float64(pc))
		jsonCPU, pbCPU = append(jsonCPU, float64(jc.Microseconds())), append(pbCPU, float64(pc.Microseconds()))
	}
	b.ReportMetric(median(jsonRates), "json-creates/s")
	b.ReportMetric(median(pbRates), "protobuf-creates/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(jsonCPU), "json-cpu-µs/op")
	b.ReportMetric(median(pbCPU), "protobuf-cpu-µs/op")
	b.ReportMetric(median(cpuRatios), "cpu-ratio")
}

// BenchmarkPodCreateClientGo creates pods with client-go's typed
// clientset over HTTPS as benchUser, at its default settings (protobuf)
// and told to speak JSON: what an operator sees, client encoding and
// decoding included (client and server share this process's CPU).
func BenchmarkPodCreateClientGo(b *testing.B) {
	e := benchServer(b)
	certPEM, keyPEM, err := e.s.PKI().CA.IssueClient(benchUser, nil, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	for _, row := range []struct {
		name    string
		content rest.ContentConfig
	}{
		{"protobuf", rest.ContentConfig{}},
		{"json", rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}},
	} {
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: e.secureURL, QPS: -1, ContentConfig: row.content,
			TLSClientConfig: rest.TLSClientConfig{CAData: e.s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM}})
		if err != nil {
			b.Fatal(err)
		}
		pods := cs.CoreV1().Pods("default")
		for _, clients := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", row.name, clients), func(b *testing.B) {
				b.ResetTimer()
				start, cpu0 := time.Now(), cpuTime()
				runConcurrent(b, clients, func() error {
					p := benchPod()
					p.Name = string(benchName(n.Add(1)))
					_, err := pods.Create(context.Background(), p, metav1.CreateOptions{})
					return err
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}
