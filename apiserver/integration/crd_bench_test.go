package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// widgetTemplate is a Widget (widgetCRD's kind: schema validation,
// defaulting, pruning and a CEL rule apply to it) with a name placeholder.
var widgetTemplate, _ = json.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
	"metadata": map[string]any{"name": "NAME_PLACEHOLDER", "labels": map[string]string{"app": "bench"}},
	"spec":     map[string]any{"size": "10cm", "replicas": 2, "color": "green"}})

func widgetBody(name string) []byte {
	return bytes.Replace(widgetTemplate, []byte("NAME_PLACEHOLDER"), []byte(name), 1)
}

// BenchmarkCRDServed measures the time from a CRD's create (201) to the
// first request its resource answers (a list through the API client, as
// the administrator), over HTTPS: discovery-free, the path a client that
// knows the resource takes.
func BenchmarkCRDServed(b *testing.B) {
	e := benchServer(b)
	admin := e.s.AdminClient(b)
	ctx := context.Background()
	var total time.Duration
	for i := range b.N {
		plural := fmt.Sprintf("gadgets%d", i)
		doc := bytes.ReplaceAll([]byte(widgetCRD), []byte("widgets"), []byte(plural))
		doc = bytes.ReplaceAll(doc, []byte("widget\n"), []byte(fmt.Sprintf("gadget%d\n", i)))
		doc = bytes.ReplaceAll(doc, []byte("kind: Widget"), []byte(fmt.Sprintf("kind: Gadget%d", i)))
		doc = bytes.ReplaceAll(doc, []byte("shortNames: [wd]"), []byte("shortNames: []"))
		body, err := yaml.YAMLToJSON(doc)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := admin.Do(ctx, client.Request{Method: http.MethodPost, Path: crdPath, Body: body}); err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := admin.Do(ctx, client.Request{Method: http.MethodGet, Path: "/apis/example.com/v1/" + plural}); err == nil {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatalf("%s not served after 30s", plural)
			}
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-served")
}

// BenchmarkCustomVsPodCreate compares custom object creates with pod
// creates on one apiserver over HTTPS as benchUser (TLS, client
// certificate, RBAC), 64 clients through the lean poster, in adjacent
// rounds: it reports the medians of widgets/s ÷ pods/s (ratio) and of pod
// CPU ÷ widget CPU per create (cpu-ratio); the issue asks that schema
// validation cost no more than twice a pod's (ratio ≥ 0.5). Use
// -benchtime Nx (N rounds).
func BenchmarkCustomVsPodCreate(b *testing.B) {
	const clients, round = 64, 2000
	e := benchServer(b)
	ctx := context.Background()
	admin := e.s.AdminClient(b)
	body, err := yaml.YAMLToJSON([]byte(widgetCRD))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := admin.Do(ctx, client.Request{Method: http.MethodPost, Path: crdPath, Body: body}); err != nil {
		b.Fatal(err)
	}
	role := &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "bench-widgets"}, Rules: []api.PolicyRule{{
		Verbs: []string{"create", "get", "list", "watch"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}}}
	if _, err := client.Resource[api.ClusterRole](admin).Create(ctx, role); err != nil {
		b.Fatal(err)
	}
	binding := &api.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "bench-widgets"},
		Subjects: []api.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: benchUser}},
		RoleRef:  api.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "bench-widgets"}}
	if _, err := client.Resource[api.ClusterRoleBinding](admin).Create(ctx, binding); err != nil {
		b.Fatal(err)
	}
	const podPath, widgetPath = "/api/v1/namespaces/default/pods", "/apis/example.com/v1/namespaces/default/widgets"
	pods, widgets := newSecurePoster(b, e, podPath), newSecurePoster(b, e, widgetPath)
	var n atomic.Int64
	createPod := func() error { return pods.post(podBody(fmt.Sprintf("p-%d", n.Add(1)))) }
	createWidget := func() error { return widgets.post(widgetBody(fmt.Sprintf("w-%d", n.Add(1)))) }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := createWidget()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("widgets are not created: %v", err)
		}
	}
	measure := func(fn func() error) (perSec float64, cpu time.Duration) {
		start, cpu0 := time.Now(), cpuTime()
		if err := fill(round, clients, fn); err != nil {
			b.Fatal(err)
		}
		return round / time.Since(start).Seconds(), (cpuTime() - cpu0) / round
	}
	measure(createPod)
	measure(createWidget)
	var podRates, widgetRates, ratios, cpuRatios []float64
	b.ResetTimer()
	for range b.N {
		p, pc := measure(createPod)
		w, wc := measure(createWidget)
		podRates, widgetRates = append(podRates, p), append(widgetRates, w)
		ratios, cpuRatios = append(ratios, w/p), append(cpuRatios, float64(pc)/float64(wc))
	}
	b.ReportMetric(median(podRates), "pods/s")
	b.ReportMetric(median(widgetRates), "widgets/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(cpuRatios), "cpu-ratio")
}
