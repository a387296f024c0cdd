package realcomponents

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// TestHPAVersionsAsKubeAPIServer writes the same HorizontalPodAutoscalers
// to the real kube-apiserver v1.37 and to minik8s' apiserver, through
// autoscaling/v2 and v1, and compares what each version reads back: the
// v1 CPU target, the v2-only fields in kube's annotations, the defaults,
// and the autoscaling group's discovery.
func TestHPAVersionsAsKubeAPIServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real kube-apiserver (skipped with -short)")
	}
	k := startKubeAPIServer(t)
	real := newClient(t, k.kubeconfig(t, "kubernetes-admin", "system:masters"))
	ours := apiservertest.Start(t, apiservertest.WithTLS).AdminClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const v2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
	const v1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	full := `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"full","annotations":{"keep":"me"}},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":10,
		"metrics":[{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"200Mi"}}},
		{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}},
		{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}},
		{"type":"Object","object":{"describedObject":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"target":{"type":"Value","value":"2k"},"metric":{"name":"hits"}}},
		{"type":"External","external":{"metric":{"name":"queue","selector":{"matchLabels":{"q":"a"}}},"target":{"type":"AverageValue","averageValue":"30"}}},
		{"type":"ContainerResource","containerResource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50},"container":"app"}}],
		"behavior":{"scaleDown":{"stabilizationWindowSeconds":120,"policies":[{"type":"Pods","value":1,"periodSeconds":30}]}}}}`
	status := `{"status":{"currentReplicas":3,"desiredReplicas":4,"lastScaleTime":"2026-01-02T03:04:05Z",
		"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageValue":"150m","averageUtilization":75}}},
		{"type":"Pods","pods":{"metric":{"name":"qps"},"current":{"averageValue":"12"}}}],
		"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"ReadyForNewScale","message":"ok"}]}}`
	plain := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"plain"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"StatefulSet","name":"db"},"maxReplicas":4}}`
	withCPU := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"cpu",
		"annotations":{"autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\",\"targetAverageValue\":\"5\"}}]",
		"autoscaling.alpha.kubernetes.io/behavior":"{\"ScaleUp\":{\"StabilizationWindowSeconds\":30,\"SelectPolicy\":\"Max\",\"Policies\":[{\"Type\":\"Pods\",\"Value\":2,\"PeriodSeconds\":60}]}}"}},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":70}}`

	read := func(c *client.Client, path string) map[string]any {
		t.Helper()
		b, err := c.Do(ctx, client.Request{Path: path})
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		md := m["metadata"].(map[string]any)
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
			delete(md, f)
		}
		return m
	}
	results := map[string][]string{}
	for _, side := range []struct {
		name string
		c    *client.Client
	}{{"kube-apiserver", real}, {"minik8s", ours}} {
		do := func(method, path, body, contentType string) {
			t.Helper()
			if _, err := side.c.Do(ctx, client.Request{Method: method, Path: path, Body: []byte(body), ContentType: contentType}); err != nil {
				t.Fatalf("%s: %s %s: %v", side.name, method, path, err)
			}
		}
		do("POST", v2, full, "")
		do("PATCH", v2+"/full/status", status, "application/merge-patch+json")
		do("POST", v1, plain, "")
		do("POST", v1, withCPU, "")
		// A v1 update of the v2 HPA keeps what v1 cannot say.
		do("PATCH", v1+"/full", `{"spec":{"targetCPUUtilizationPercentage":65,"maxReplicas":12}}`, "application/merge-patch+json")
		for _, p := range []string{v1 + "/full", v2 + "/full", v1 + "/plain", v2 + "/plain", v1 + "/cpu", v2 + "/cpu"} {
			b, _ := json.Marshal(read(side.c, p))
			results[side.name] = append(results[side.name], string(b))
		}
		d, err := side.c.Do(ctx, client.Request{Path: "/apis/autoscaling"})
		if err != nil {
			t.Fatal(err)
		}
		results[side.name] = append(results[side.name], string(d))
	}
	for i, want := range results["kube-apiserver"] {
		if got := results["minik8s"][i]; got != want {
			t.Errorf("read %d:\nminik8s:        %s\nkube-apiserver: %s", i, got, want)
		}
	}
}
