package integration

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestServedKindsDefaultAndValidate: the kinds served for the real
// kube-scheduler and kube-controller-manager get Kubernetes' defaults on
// create, and their main mistakes Kubernetes' 422 with a cause per field.
func TestServedKindsDefaultAndValidate(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	labels := map[string]any{"app": "db"}
	template := func(restart string) map[string]any {
		spec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}
		if restart != "" {
			spec["restartPolicy"] = restart
		}
		return map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec}
	}
	selector := map[string]any{"matchLabels": labels}
	get := func(o map[string]any, path ...string) any {
		var v any = o
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}

	valid := []struct {
		path     string
		body     map[string]any
		field    []string
		defaulty any
	}{
		{"/apis/apps/v1/namespaces/default/statefulsets", map[string]any{"metadata": map[string]any{"name": "db"},
			"spec": map[string]any{"serviceName": "db", "selector": selector, "template": template("")}},
			[]string{"spec", "podManagementPolicy"}, "OrderedReady"},
		{"/apis/apps/v1/namespaces/default/daemonsets", map[string]any{"metadata": map[string]any{"name": "agent"},
			"spec": map[string]any{"selector": selector, "template": template("")}},
			[]string{"spec", "updateStrategy", "type"}, "RollingUpdate"},
		{"/apis/batch/v1/namespaces/default/cronjobs", map[string]any{"metadata": map[string]any{"name": "tick"},
			"spec": map[string]any{"schedule": "*/5 * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": template("OnFailure")}}}},
			[]string{"spec", "concurrencyPolicy"}, "Allow"},
		{"/api/v1/namespaces/default/replicationcontrollers", map[string]any{"metadata": map[string]any{"name": "rc"},
			"spec": map[string]any{"template": template("")}},
			[]string{"spec", "selector", "app"}, "db"},
		{"/api/v1/namespaces/default/persistentvolumeclaims", map[string]any{"metadata": map[string]any{"name": "data"},
			"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}},
			[]string{"spec", "volumeMode"}, "Filesystem"},
		{"/api/v1/persistentvolumes", map[string]any{"metadata": map[string]any{"name": "pv0"},
			"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/data"}}},
			[]string{"spec", "persistentVolumeReclaimPolicy"}, "Retain"},
		{"/apis/storage.k8s.io/v1/storageclasses", map[string]any{"metadata": map[string]any{"name": "standard"}, "provisioner": "example.com/disk"},
			[]string{"volumeBindingMode"}, "Immediate"},
		{"/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", map[string]any{"metadata": map[string]any{"name": "web"},
			"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}},
			[]string{"spec", "minReplicas"}, float64(1)},
		{"/apis/policy/v1/namespaces/default/poddisruptionbudgets", map[string]any{"metadata": map[string]any{"name": "db"},
			"spec": map[string]any{"minAvailable": 1, "selector": selector}},
			[]string{"spec", "minAvailable"}, float64(1)},
	}
	for _, v := range valid {
		out := c.must(201, "POST", v.path, v.body)
		if got := get(out, v.field...); got != v.defaulty {
			t.Errorf("%s: %s = %v, want %v", v.path, strings.Join(v.field, "."), got, v.defaulty)
		}
		if strings.HasSuffix(v.path, "/persistentvolumes") || strings.HasSuffix(v.path, "/persistentvolumeclaims") {
			if got := get(out, "status", "phase"); got != "Pending" {
				t.Errorf("%s: a new one is %v, want Pending", v.path, got)
			}
		}
	}

	invalid := []struct {
		path   string
		body   map[string]any
		causes []string
	}{
		{"/apis/apps/v1/namespaces/default/statefulsets", map[string]any{"metadata": map[string]any{"name": "bad"},
			"spec": map[string]any{"template": template("Never")}},
			[]string{"spec.selector", "spec.template.spec.restartPolicy"}},
		{"/api/v1/namespaces/default/persistentvolumeclaims", map[string]any{"metadata": map[string]any{"name": "bad"}, "spec": map[string]any{}},
			[]string{"spec.accessModes", "spec.resources[storage]"}},
		{"/api/v1/persistentvolumes", map[string]any{"metadata": map[string]any{"name": "bad"},
			"spec": map[string]any{"accessModes": []any{"ReadWriteSometimes"}}},
			[]string{"spec.capacity", "spec.accessModes", "spec"}},
		{"/apis/storage.k8s.io/v1/storageclasses", map[string]any{"metadata": map[string]any{"name": "bad"}},
			[]string{"provisioner"}},
		{"/apis/batch/v1/namespaces/default/cronjobs", map[string]any{"metadata": map[string]any{"name": "bad"},
			"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": template("Always")}}}},
			[]string{"spec.schedule", "spec.jobTemplate.spec.template.spec.restartPolicy"}},
		{"/apis/policy/v1/namespaces/default/poddisruptionbudgets", map[string]any{"metadata": map[string]any{"name": "bad"},
			"spec": map[string]any{"minAvailable": 1, "maxUnavailable": 1}},
			[]string{"spec"}},
		{"/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", map[string]any{"metadata": map[string]any{"name": "bad"},
			"spec": map[string]any{"scaleTargetRef": map[string]any{}, "minReplicas": 3, "maxReplicas": 2}},
			[]string{"spec.scaleTargetRef.kind", "spec.scaleTargetRef.name", "spec.maxReplicas"}},
	}
	for _, v := range invalid {
		r := c.do("POST", v.path, v.body, "")
		if r.Code != 422 {
			t.Errorf("%s: %d %s, want 422", v.path, r.Code, r.Body)
			continue
		}
		for _, f := range v.causes {
			if !strings.Contains(string(r.Body), `"field":"`+f+`"`) {
				t.Errorf("%s: no cause for %s in %s", v.path, f, r.Body)
			}
		}
	}
}

// TestServedKindsInCategoryAll: kubectl get all lists the workload kinds
// Kubernetes puts in the "all" category.
func TestServedKindsInCategoryAll(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	in := map[string]bool{}
	for _, gv := range []string{"/api/v1", "/apis/apps/v1", "/apis/batch/v1", "/apis/autoscaling/v2", "/apis/storage.k8s.io/v1"} {
		for _, r := range c.must(200, "GET", gv, nil)["resources"].([]any) {
			r := r.(map[string]any)
			if cats, _ := r["categories"].([]any); len(cats) == 1 && cats[0] == "all" {
				in[r["name"].(string)] = true
			}
		}
	}
	for _, r := range []string{"pods", "replicationcontrollers", "services", "daemonsets", "deployments", "replicasets",
		"statefulsets", "horizontalpodautoscalers", "jobs", "cronjobs"} {
		if !in[r] {
			t.Errorf("%s not in category all", r)
		}
	}
	if in["storageclasses"] || in["persistentvolumeclaims"] {
		t.Errorf("category all: %v", in)
	}
}
