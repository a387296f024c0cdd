package realcomponents

import (
	"encoding/json"
	"net/http"
	"testing"
)

// quote is v as a JSON string (kube's round-trip annotations are JSON in
// a JSON string).
func quote(v string) string { b, _ := json.Marshal(v); return string(b) }

// TestHPAVersionsAsKubeAPIServer writes the same HorizontalPodAutoscalers
// to the real kube-apiserver v1.37 and to minik8s' apiserver, through
// autoscaling/v2 and v1, and compares what each version reads back: the
// v1 CPU target, the v2-only fields in kube's annotations, the defaults,
// and the autoscaling group's discovery.
func TestHPAVersionsAsKubeAPIServer(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

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

	var results [2][]string
	for i, e := range both.each() {
		e.must(t, http.StatusCreated, "POST", v2, full)
		e.must(t, http.StatusOK, "PATCH", v2+"/full/status", status)
		e.must(t, http.StatusCreated, "POST", v1, plain)
		e.must(t, http.StatusCreated, "POST", v1, withCPU)
		// A v1 update of the v2 HPA keeps what v1 cannot say.
		e.must(t, http.StatusOK, "PATCH", v1+"/full", `{"spec":{"targetCPUUtilizationPercentage":65,"maxReplicas":12}}`)
		for _, p := range []string{v1 + "/full", v2 + "/full", v1 + "/plain", v2 + "/plain", v1 + "/cpu", v2 + "/cpu"} {
			b, _ := json.Marshal(withoutServerMeta(e.must(t, http.StatusOK, "GET", p, "")))
			results[i] = append(results[i], string(b))
		}
		// The discovery document as served, to the byte.
		code, d, err := e.request("GET", "/apis/autoscaling", "")
		if err != nil || code != http.StatusOK {
			t.Fatalf("%s: GET /apis/autoscaling: %d %v", e.name, code, err)
		}
		results[i] = append(results[i], string(d))
	}
	for i, want := range results[0] {
		if got := results[1][i]; got != want {
			t.Errorf("read %d:\nminik8s:        %s\nkube-apiserver: %s", i, got, want)
		}
	}
}

// TestHPAV1WritesAsKubeAPIServer sends the same autoscaling/v1 writes
// carrying kube's round-trip annotations to the real kube-apiserver v1.37
// and to minik8s, and compares each answer and what v1 and v2 read back
// after it: a create takes its metrics and behavior from the annotations
// but starts with an empty status; an update of the HPA keeps the stored
// status whatever current-metrics and conditions annotations it carries
// (or when it carries none); an update of /status takes the status from
// them and keeps the stored spec whatever metrics annotation it carries;
// autoscaling/v2 writes keep none of these annotations; and what v1 cannot
// say exactly of a v2 HPA survives the v1 writes that may not change it.
func TestHPAV1WritesAsKubeAPIServer(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

	const v2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
	const v1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	// The annotations' values as kube writes them (JSON in a JSON string).
	metrics := func(name, value string) string {
		return quote(`[{"type":"Pods","pods":{"metricName":"` + name + `","targetAverageValue":"` + value + `"}}]`)
	}
	current := func(name, value string) string {
		return quote(`[{"type":"Pods","pods":{"metricName":"` + name + `","currentAverageValue":"` + value + `"}},` +
			`{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":91,"currentAverageValue":"900m"}}]`)
	}
	conditions := func(reason string) string {
		return quote(`[{"type":"ScalingActive","status":"False","lastTransitionTime":"2026-03-04T05:06:07Z","reason":"` + reason + `","message":"forged"}]`)
	}
	behavior := quote(`{"ScaleUp":{"StabilizationWindowSeconds":30,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":2,"PeriodSeconds":60}]}}`)
	annotations := func(m, cur, cond string) string {
		return `{"keep":"me","autoscaling.alpha.kubernetes.io/metrics":` + m +
			`,"autoscaling.alpha.kubernetes.io/current-metrics":` + cur +
			`,"autoscaling.alpha.kubernetes.io/conditions":` + cond +
			`,"autoscaling.alpha.kubernetes.io/behavior":` + behavior + `}`
	}
	spec := `"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,"targetCPUUtilizationPercentage":70}`
	// A create with every annotation: metrics and behavior are the spec's,
	// the status annotations are not the status of a new HPA.
	create := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"ann","annotations":` +
		annotations(metrics("qps", "5"), current("qps", "7"), conditions("Created")) + `},` + spec + `}`
	// The controller's status, through v2.
	status := `{"status":{"currentReplicas":2,"desiredReplicas":3,"lastScaleTime":"2026-01-02T03:04:05Z",
		"currentMetrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"current":{"averageValue":"6"}}}],
		"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z","reason":"ReadyForNewScale","message":"ok"}]}}`
	// An update of the HPA with forged status annotations, a new metric
	// (a spec change only the annotation shows) and a v1 status.
	update := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"ann","annotations":` +
		annotations(metrics("rps", "9"), current("rps", "99"), conditions("Forged")) + `},` + spec +
		`,"status":{"currentReplicas":8,"desiredReplicas":9,"currentCPUUtilizationPercentage":12}}`
	// An update of the HPA that carries none of them.
	bare := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"ann","annotations":{"keep":"me"}},` +
		`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":6,"targetCPUUtilizationPercentage":70}}`
	// An update of /status with another spec and a metrics annotation.
	statusUpdate := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"ann","annotations":` +
		annotations(metrics("lat", "3"), current("lat", "4"), conditions("FromStatus")) + `},` +
		`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"other"},"maxReplicas":50},` +
		`"status":{"currentReplicas":4,"desiredReplicas":5,"currentCPUUtilizationPercentage":33}}`
	// A v2 create carrying the v1 annotations: v2 keeps none of them.
	v2Create := `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"v2ann","annotations":` +
		annotations(metrics("qps", "5"), current("qps", "7"), conditions("Created")) + `},` +
		`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}}`

	// An HPA written through v2 with what v1 cannot say exactly (a CPU
	// target before another metric, current metrics without the values
	// v1 requires) keeps it through v1 writes of the other part, and
	// through a v1 deletion held by a finalizer.
	held := `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"held","finalizers":["example.com/hold"]},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":7,
		"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}},
		{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}}]}}`
	heldStatus := `{"status":{"currentReplicas":1,"desiredReplicas":1,
		"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":40}}},
		{"type":"Object","object":{"metric":{"name":"hits"},"current":{"averageValue":"3"},"describedObject":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"}}}]}}`
	heldStatusV1 := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"held","finalizers":["example.com/hold"],"annotations":` +
		annotations(metrics("lat", "3"), current("lat", "4"), conditions("FromStatus")) + `},` +
		`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":7,"targetCPUUtilizationPercentage":50},` +
		`"status":{"currentReplicas":2,"desiredReplicas":2}}`
	heldUpdate := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"held","finalizers":["example.com/hold"]},` +
		`"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":8,"targetCPUUtilizationPercentage":50}}`

	// A PATCH is a merge patch (see endpoint.request).
	steps := []struct{ method, path, body, name string }{
		{"POST", v1, create, "ann"},
		{"PATCH", v2 + "/ann/status", status, "ann"},
		{"PUT", v1 + "/ann", update, "ann"},
		{"PUT", v1 + "/ann", bare, "ann"},
		{"PUT", v1 + "/ann/status", statusUpdate, "ann"},
		{"POST", v2, v2Create, "v2ann"},
		{"POST", v2, held, "held"},
		{"PATCH", v2 + "/held/status", heldStatus, "held"},
		{"PUT", v1 + "/held/status", heldStatusV1, "held"},
		{"PATCH", v2 + "/held/status", heldStatus, "held"},
		{"PUT", v1 + "/held", heldUpdate, "held"},
		{"DELETE", v1 + "/held", "", "held"},
	}
	var results [2][]string
	for i, e := range both.each() {
		for _, st := range steps {
			code := http.StatusOK
			if st.method == "POST" {
				code = http.StatusCreated
			}
			got := []any{withoutServerMeta(e.must(t, code, st.method, st.path, st.body))}
			for _, p := range []string{v1 + "/" + st.name, v2 + "/" + st.name} {
				got = append(got, withoutServerMeta(e.must(t, http.StatusOK, "GET", p, "")))
			}
			b, _ := json.Marshal(got)
			results[i] = append(results[i], string(b))
		}
	}
	for i, want := range results[0] {
		if got := results[1][i]; got != want {
			t.Errorf("%s %s (answer, then v1 and v2 reads):\nminik8s:        %s\nkube-apiserver: %s", steps[i].method, steps[i].path, got, want)
		}
	}
}
