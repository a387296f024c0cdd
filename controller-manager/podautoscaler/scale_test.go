package podautoscaler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/aggregator/aggregatortest"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/podautoscaler"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// TestAutoscalingThroughScale: the controller scales what it reaches only
// through /scale, a StatefulSet (autoscaling/v2 HPA) and a custom resource
// whose CRD declares the scale subresource (an autoscaling/v1 HPA, written
// through v1's CPU target): both go from 1 replica to the HPA's maximum on
// 200% CPU against a 50% target, and the v1 HPA reads back its status.
func TestAutoscalingThroughScale(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)

	// Every pod uses 200m; the selectors name the pods.
	pods := map[string][]string{"app=db": {"db-0"}, "app=cache": {"cache-0"}}
	backend := aggregatortest.Start(t, ctx, c, aggregatortest.Options{Group: "metrics.k8s.io", Version: "v1beta1", Service: "metrics-server",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/apis/metrics.k8s.io/v1beta1":
				fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]}`)
			case "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods":
				names, ok := pods[r.URL.Query().Get("labelSelector")]
				if !ok {
					http.Error(w, "unexpected selector "+r.URL.RawQuery, http.StatusBadRequest)
					return
				}
				ts := time.Now().Add(-5 * time.Second).UTC().Format(time.RFC3339)
				var items []string
				for _, p := range names {
					items = append(items, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default"},"timestamp":%q,"window":"15s","containers":[{"name":"app","usage":{"cpu":"200m","memory":"10Mi"}}]}`, p, ts))
				}
				fmt.Fprintf(w, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[%s]}`, strings.Join(items, ","))
			default:
				http.NotFound(w, r)
			}
		})})
	aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionTrue, "Passed")

	container := api.Container{Name: "app", Image: "busybox", Resources: api.ResourceRequirements{
		Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("100m")}}}
	do := func(method, path string, body any) []byte {
		t.Helper()
		b, _ := json.Marshal(body)
		if body == nil {
			b = nil
		}
		out, err := c.Do(ctx, client.Request{Method: method, Path: path, Body: b})
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return out
	}

	// A StatefulSet of one.
	one := int32(1)
	db := map[string]string{"app": "db"}
	if _, err := client.Resource[api.StatefulSet](c).Namespace("default").Create(ctx, &api.StatefulSet{ObjectMeta: api.ObjectMeta{Name: "db"},
		Spec: api.StatefulSetSpec{Replicas: &one, ServiceName: "db", Selector: &api.LabelSelector{MatchLabels: db},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: db}, Spec: api.PodSpec{Containers: []api.Container{container}}}}}); err != nil {
		t.Fatal(err)
	}
	// A custom resource of one, its selector in its status.
	do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "caches.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "caches", "singular": "cache", "kind": "Cache"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{"replicas": map[string]any{"type": "integer"}}},
					"status": map[string]any{"type": "object", "properties": map[string]any{
						"replicas": map[string]any{"type": "integer"}, "selector": map[string]any{"type": "string"}}}}}},
				"subresources": map[string]any{"status": map[string]any{}, "scale": map[string]any{
					"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}}}},
	})
	const caches = "/apis/example.com/v1/namespaces/default/caches"
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := c.Do(ctx, client.Request{Path: caches}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("caches.example.com not served")
		}
		time.Sleep(50 * time.Millisecond)
	}
	do("POST", caches, map[string]any{"apiVersion": "example.com/v1", "kind": "Cache", "metadata": map[string]any{"name": "cache"},
		"spec": map[string]any{"replicas": 1}})
	if _, err := c.Do(ctx, client.Request{Method: "PATCH", Path: caches + "/cache/status", ContentType: "application/merge-patch+json",
		Body: []byte(`{"status":{"replicas":1,"selector":"app=cache"}}`)}); err != nil {
		t.Fatal(err)
	}

	// Their pods, running and ready for an hour.
	pc := client.Resource[api.Pod](c).Namespace("default")
	started := api.Time{Time: time.Now().Add(-time.Hour).Truncate(time.Second)}
	for _, p := range []struct{ name, app string }{{"db-0", "db"}, {"cache-0", "cache"}} {
		pod, err := pc.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: p.name, Labels: map[string]string{"app": p.app}},
			Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{container}}})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status = api.PodStatus{Phase: api.PodRunning, StartTime: &started,
			Conditions: []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: started}}}
		if _, err := pc.UpdateStatus(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}

	// The autoscalers: v2 for the StatefulSet, v1 for the custom resource.
	do("POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", map[string]any{
		"metadata": map[string]any{"name": "db"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
			"maxReplicas": 3, "metrics": []any{map[string]any{"type": "Resource",
				"resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": 50}}}}}})
	do("POST", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", map[string]any{
		"metadata": map[string]any{"name": "cache"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "example.com/v1", "kind": "Cache", "name": "cache"},
			"maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})

	f := informer.NewFactory(c, informer.FactoryOptions{})
	bc := events.NewBroadcaster(c, events.Options{Component: "horizontal-pod-autoscaler"})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go bc.Run(runCtx)
	ctl := podautoscaler.NewController(c, informer.Shared[api.HorizontalPodAutoscaler](f, "", client.ListOptions{}),
		informer.Shared[api.Pod](f, "", client.ListOptions{}), podautoscaler.APIMetrics{Client: c}, bc.Recorder(), apiservertest.Logger(),
		podautoscaler.Config{SyncPeriod: 300 * time.Millisecond, DownscaleStabilization: 5 * time.Minute})
	f.Start(runCtx)
	go func() { _ = ctl.Run(runCtx, 2) }()

	// 200% against 50% wants 4: the maximum, 3, through each /scale.
	var scale api.Scale
	for _, path := range []string{"/apis/apps/v1/namespaces/default/statefulsets/db/scale", caches + "/cache/scale"} {
		for {
			b, err := c.Do(ctx, client.Request{Path: path})
			if err == nil && json.Unmarshal(b, &scale) == nil && scale.Spec.Replicas == 3 {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s never scaled to 3: %v %s", path, err, b)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	sts, err := client.Resource[api.StatefulSet](c).Namespace("default").Get(ctx, "db")
	if err != nil || *sts.Spec.Replicas != 3 {
		t.Errorf("StatefulSet replicas %v %v", sts, err)
	}
	var cache struct {
		Spec struct {
			Replicas int `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(do("GET", caches+"/cache", nil), &cache); err != nil || cache.Spec.Replicas != 3 {
		t.Errorf("custom resource spec.replicas %d %v", cache.Spec.Replicas, err)
	}

	// The v1 HPA's status, as v1 tells it.
	for {
		var hpa api.HorizontalPodAutoscalerV1
		if err := json.Unmarshal(do("GET", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/cache", nil), &hpa); err != nil {
			t.Fatal(err)
		}
		u := hpa.Status.CurrentCPUUtilizationPercentage
		if hpa.Status.DesiredReplicas == 3 && u != nil && *u == 200 && hpa.Status.LastScaleTime != nil &&
			strings.Contains(hpa.Annotations[api.HPAConditionsAnnotation], `"reason":"TooManyReplicas"`) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("v1 HPA status %+v, annotations %v", hpa.Status, hpa.Annotations)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
