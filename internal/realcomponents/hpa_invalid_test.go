package realcomponents

import (
	"net/http"
	"reflect"
	"testing"
)

// TestHPABadInputAsKube sends the same bad HorizontalPodAutoscalers to the
// real kube-apiserver v1.37 and to minik8s' apiserver, through
// autoscaling/v2 and v1: replica bounds, the scale target reference, metric
// types, sources and targets, behavior policies, several errors at once.
// Each answer must be the same (code, reason, message, details and causes,
// in order) and neither server may store the HPA; a refused update changes
// nothing. autoscaling/v1 round-trip annotations that do not decode are
// not refused: kube ignores them, and both must store the same HPA.
func TestHPABadInputAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

	const v2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
	const v1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	const target = `"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}`
	// hpa2 is a v2 HPA named name with the spec's other fields.
	hpa2 := func(name, spec string) string {
		return `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"` + name + `"},"spec":{` + spec + `}}`
	}
	// withTarget is a spec scaling web with these other fields.
	withTarget := func(rest string) string { return target + `,` + rest }
	metric := func(m string) string { return withTarget(`"maxReplicas":5,"metrics":[` + m + `]`) }
	behavior := func(b string) string { return withTarget(`"maxReplicas":5,"behavior":` + b) }
	hpa1 := func(name, annotations, spec string) string {
		meta := `"name":"` + name + `"`
		if annotations != "" {
			meta += `,"annotations":{` + annotations + `}`
		}
		return `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{` + meta + `},"spec":{` + spec + `}}`
	}
	ann := func(key, value string) string {
		return quote("autoscaling.alpha.kubernetes.io/"+key) + `:` + quote(value)
	}

	cases := []struct{ name, path, body string }{
		// Replica bounds.
		{"v2-min-zero", v2, hpa2("v2-min-zero", withTarget(`"minReplicas":0,"maxReplicas":5`))},
		{"v2-min-above-max", v2, hpa2("v2-min-above-max", withTarget(`"minReplicas":6,"maxReplicas":5`))},
		{"v2-min-negative", v2, hpa2("v2-min-negative", withTarget(`"minReplicas":-1,"maxReplicas":5`))},
		{"v2-max-zero", v2, hpa2("v2-max-zero", withTarget(`"maxReplicas":0`))},
		{"v2-max-negative", v2, hpa2("v2-max-negative", withTarget(`"maxReplicas":-2`))},
		{"v2-max-missing", v2, hpa2("v2-max-missing", target)},
		// The scale target.
		{"v2-no-kind", v2, hpa2("v2-no-kind", `"scaleTargetRef":{"apiVersion":"apps/v1","name":"web"},"maxReplicas":5`)},
		{"v2-no-name", v2, hpa2("v2-no-name", `"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment"},"maxReplicas":5`)},
		{"v2-no-ref", v2, hpa2("v2-no-ref", `"maxReplicas":5`)},
		{"v2-core-group", v2, hpa2("v2-core-group", `"scaleTargetRef":{"apiVersion":"v1","kind":"Deployment","name":"web"},"maxReplicas":5`)},
		{"v2-rc-core-group", v2, hpa2("v2-rc-core-group", `"scaleTargetRef":{"apiVersion":"v1","kind":"ReplicationController","name":"web"},"maxReplicas":5,"minReplicas":0`)},
		{"v2-bad-api-version", v2, hpa2("v2-bad-api-version", `"scaleTargetRef":{"apiVersion":"a/b/c","kind":"Deployment","name":"web"},"maxReplicas":5`)},
		{"v2-slash-names", v2, hpa2("v2-slash-names", `"scaleTargetRef":{"apiVersion":"apps/v1","kind":"a/b","name":".."},"maxReplicas":5`)},
		// Metric types and sources.
		{"v2-metric-no-type", v2, hpa2("v2-metric-no-type", metric(`{"resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}`))},
		{"v2-metric-bad-type", v2, hpa2("v2-metric-bad-type", metric(`{"type":"Bogus"}`))},
		{"v2-metric-missing-source", v2, hpa2("v2-metric-missing-source", metric(`{"type":"Resource"},{"type":"Pods"},{"type":"Object"},{"type":"External"},{"type":"ContainerResource"}`))},
		{"v2-metric-other-source", v2, hpa2("v2-metric-other-source", metric(`{"type":"Pods","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}`))},
		{"v2-metric-two-sources", v2, hpa2("v2-metric-two-sources", metric(`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}},"external":{"metric":{"name":"q"},"target":{"type":"Value","value":"1"}}}`))},
		{"v2-resource-no-target", v2, hpa2("v2-resource-no-target", metric(`{"type":"Resource","resource":{"name":"cpu"}}`))},
		{"v2-resource-no-name", v2, hpa2("v2-resource-no-name", metric(`{"type":"Resource","resource":{"target":{"type":"Utilization","averageUtilization":50}}}`))},
		{"v2-resource-zero-utilization", v2, hpa2("v2-resource-zero-utilization", metric(`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":0}}}`))},
		{"v2-resource-both", v2, hpa2("v2-resource-both", metric(`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageUtilization":50,"averageValue":"100Mi"}}}`))},
		{"v2-target-bad-type", v2, hpa2("v2-target-bad-type", metric(`{"type":"Resource","resource":{"name":"cpu","target":{"type":"Percent","averageUtilization":50}}}`))},
		{"v2-target-not-positive", v2, hpa2("v2-target-not-positive", metric(`{"type":"Object","object":{"describedObject":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metric":{"name":"hits"},"target":{"type":"Value","value":"0","averageValue":"-1"}}}`))},
		// Utilization is for resources only.
		{"v2-pods-utilization", v2, hpa2("v2-pods-utilization", metric(`{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"Utilization","averageUtilization":50}}}`))},
		{"v2-object-utilization", v2, hpa2("v2-object-utilization", metric(`{"type":"Object","object":{"describedObject":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metric":{"name":"hits"},"target":{"type":"Utilization","averageUtilization":50}}}`))},
		{"v2-external-utilization", v2, hpa2("v2-external-utilization", metric(`{"type":"External","external":{"metric":{"name":"queue"},"target":{"type":"Utilization","averageUtilization":50}}}`))},
		{"v2-external-both", v2, hpa2("v2-external-both", metric(`{"type":"External","external":{"metric":{"name":"queue"},"target":{"type":"Value","value":"3","averageValue":"1"}}}`))},
		{"v2-object-bad-ref", v2, hpa2("v2-object-bad-ref", metric(`{"type":"Object","object":{"describedObject":{"apiVersion":"x/y/z"},"metric":{"name":"a/b"},"target":{"type":"Value","value":"1"}}}`))},
		{"v2-pods-no-name", v2, hpa2("v2-pods-no-name", metric(`{"type":"Pods","pods":{"metric":{},"target":{"type":"AverageValue","averageValue":"1"}}}`))},
		{"v2-container-resource", v2, hpa2("v2-container-resource", metric(`{"type":"ContainerResource","containerResource":{"name":"cpu","target":{"type":"Utilization"}},"pods":{"metric":{"name":"x"}}}`))},
		{"v2-container-bad-names", v2, hpa2("v2-container-bad-names", metric(`{"type":"ContainerResource","containerResource":{"name":"example.com/gpu","container":"Not_A_Label","target":{"type":"AverageValue","averageValue":"1"}}}`))},
		// Behavior.
		{"v2-period-zero", v2, hpa2("v2-period-zero", behavior(`{"scaleUp":{"policies":[{"type":"Pods","value":1,"periodSeconds":0}]}}`))},
		{"v2-period-long", v2, hpa2("v2-period-long", behavior(`{"scaleDown":{"policies":[{"type":"Percent","value":10,"periodSeconds":1801}]}}`))},
		{"v2-value-zero", v2, hpa2("v2-value-zero", behavior(`{"scaleUp":{"policies":[{"type":"Pods","value":0,"periodSeconds":60}]}}`))},
		{"v2-policy-bad-type", v2, hpa2("v2-policy-bad-type", behavior(`{"scaleUp":{"policies":[{"type":"Nodes","value":1,"periodSeconds":60}]}}`))},
		{"v2-window-long", v2, hpa2("v2-window-long", behavior(`{"scaleDown":{"stabilizationWindowSeconds":3601}}`))},
		{"v2-window-negative", v2, hpa2("v2-window-negative", behavior(`{"scaleUp":{"stabilizationWindowSeconds":-1}}`))},
		{"v2-select-policy", v2, hpa2("v2-select-policy", behavior(`{"scaleUp":{"selectPolicy":"Average"},"scaleDown":{"selectPolicy":"disabled"}}`))},
		{"v2-no-policies", v2, hpa2("v2-no-policies", behavior(`{"scaleUp":{"policies":[]}}`))},
		{"v2-tolerance", v2, hpa2("v2-tolerance", behavior(`{"scaleUp":{"tolerance":"-0.1"}}`))},
		// Several errors at once.
		{"v2-everything", v2, hpa2("v2-everything", `"scaleTargetRef":{"apiVersion":"v1"},"minReplicas":0,"maxReplicas":-1,
			"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"Utilization","averageUtilization":0}}},{"type":"Bogus"}],
			"behavior":{"scaleUp":{"stabilizationWindowSeconds":4000,"selectPolicy":"Sometimes","policies":[{"type":"Nodes","value":0,"periodSeconds":0}]},
			"scaleDown":{"policies":[{"type":"Pods","value":-1,"periodSeconds":2000}]}}`)},

		// autoscaling/v1: its errors name v2's fields.
		{"v1-min-zero", v1, hpa1("v1-min-zero", "", withTarget(`"minReplicas":0,"maxReplicas":5`))},
		{"v1-min-above-max", v1, hpa1("v1-min-above-max", "", withTarget(`"minReplicas":6,"maxReplicas":5`))},
		{"v1-max-zero", v1, hpa1("v1-max-zero", "", withTarget(`"maxReplicas":0`))},
		{"v1-no-kind-name", v1, hpa1("v1-no-kind-name", "", `"scaleTargetRef":{"apiVersion":"apps/v1"},"maxReplicas":5`)},
		{"v1-cpu-zero", v1, hpa1("v1-cpu-zero", "", withTarget(`"maxReplicas":5,"targetCPUUtilizationPercentage":0`))},
		{"v1-everything", v1, hpa1("v1-everything", "", `"scaleTargetRef":{},"minReplicas":0,"maxReplicas":-3,"targetCPUUtilizationPercentage":-5`)},
		{"v1-bad-metrics", v1, hpa1("v1-bad-metrics", ann("metrics", `[{"type":"Pods","pods":{"metricName":"","targetAverageValue":"0"}},{"type":"Object"},{"type":"Bogus"}]`),
			withTarget(`"maxReplicas":5`))},
		{"v1-bad-behavior", v1, hpa1("v1-bad-behavior", ann("behavior", `{"ScaleUp":{"StabilizationWindowSeconds":3601,"SelectPolicy":"Nope","Policies":[{"Type":"Pods","Value":0,"PeriodSeconds":1801}]}}`),
			withTarget(`"maxReplicas":5`))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			both.sameRefusal(t, "POST", tc.path, tc.body)
			for _, e := range both.each() {
				if code, out := e.do(t, "GET", v2+"/"+tc.name, ""); code != http.StatusNotFound {
					t.Errorf("%s stored the refused HPA: %d %v", e.name, code, out)
				}
			}
		})
	}

	// Round-trip annotations that do not decode: kube's conversion from
	// autoscaling/v1 ignores them (json.Unmarshal errors are dropped) and
	// drops them with the others, so the HPA is created as if they were
	// not there.
	for _, tc := range []struct{ name, path, body string }{
		{"v1-metrics-not-json", v1, hpa1("v1-metrics-not-json", ann("metrics", `not json`), withTarget(`"maxReplicas":5`))},
		{"v1-metrics-object", v1, hpa1("v1-metrics-object", ann("metrics", `{"type":"Pods"}`), withTarget(`"maxReplicas":5`))},
		{"v1-metrics-bad-quantity", v1, hpa1("v1-metrics-bad-quantity", ann("metrics", `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"lots"}}]`), withTarget(`"maxReplicas":5`))},
		{"v1-behavior-truncated", v1, hpa1("v1-behavior-truncated", ann("behavior", `{"ScaleUp":`), withTarget(`"maxReplicas":5`))},
		{"v1-behavior-wrong-type", v1, hpa1("v1-behavior-wrong-type", ann("behavior", `{"ScaleUp":{"Policies":"Pods"}}`), withTarget(`"maxReplicas":5`))},
		{"v1-current-metrics", v1, hpa1("v1-current-metrics", ann("current-metrics", `[`), withTarget(`"maxReplicas":5`))},
		{"v1-conditions", v1, hpa1("v1-conditions", ann("conditions", `{}`), withTarget(`"maxReplicas":5`))},
		{"v1-tolerance", v1, hpa1("v1-tolerance", ann("scale-up-tolerance", `lots`), withTarget(`"maxReplicas":5`))},
		{"v1-empty-annotation", v1, hpa1("v1-empty-annotation", ann("metrics", ``), withTarget(`"maxReplicas":5`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both.sameAcceptance(t, http.StatusCreated, "POST", tc.path, tc.body, v1+"/"+tc.name, v2+"/"+tc.name)
		})
	}

	// Updates of a good HPA to bad ones, through v2 and v1, change nothing.
	good := hpa2("good", withTarget(`"minReplicas":2,"maxReplicas":5`))
	var before []map[string]any
	for _, e := range both.each() {
		e.must(t, http.StatusCreated, "POST", v2, good)
		before = append(before, e.must(t, http.StatusOK, "GET", v2+"/good", ""))
	}
	for _, tc := range []struct{ name, method, path, body string }{
		{"v2-patch", "PATCH", v2 + "/good", `{"spec":{"minReplicas":0,"behavior":{"scaleUp":{"policies":[{"type":"Pods","value":1,"periodSeconds":0}]}}}}`},
		{"v2-put", "PUT", v2 + "/good", hpa2("good", `"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":5`)},
		{"v1-patch", "PATCH", v1 + "/good", `{"spec":{"minReplicas":9}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both.sameRefusal(t, tc.method, tc.path, tc.body)
		})
	}
	for i, e := range both.each() {
		after := e.must(t, http.StatusOK, "GET", v2+"/good", "")
		if !reflect.DeepEqual(after, before[i]) {
			t.Errorf("%s: refused updates changed the HPA:\nbefore %v\nafter  %v", e.name, before[i], after)
		}
	}
	// Updates whose round-trip annotations do not decode are taken as if
	// they were not there.
	for _, tc := range []struct{ name, method, path, body string }{
		{"v1-put-annotation", "PUT", v1 + "/good", hpa1("good", ann("metrics", `[{]`), withTarget(`"minReplicas":2,"maxReplicas":6`))},
		{"v1-patch-annotation", "PATCH", v1 + "/good", `{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/behavior":"nope"}},"spec":{"maxReplicas":7}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both.sameAcceptance(t, http.StatusOK, tc.method, tc.path, tc.body, v1+"/good", v2+"/good")
		})
	}
}
