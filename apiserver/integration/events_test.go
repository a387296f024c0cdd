package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestEventsV1SharesCoreStorage: events.k8s.io/v1 Events are the core
// Events converted, as in Kubernetes: one written through either API reads
// back through the other with the fields renamed, under the same
// resourceVersion; watches of either see the other's writes; field
// selectors use each API's names; a create through events.k8s.io gets its
// stricter validation (422 with kube's causes).
func TestEventsV1SharesCoreStorage(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const v1 = "/apis/events.k8s.io/v1/namespaces/default/events"
	const core = "/api/v1/namespaces/default/events"

	w := c.watch(v1 + "?fieldSelector=regarding.name=web-1")
	defer w.stop()

	created := c.must(201, "POST", v1, map[string]any{
		"apiVersion": "events.k8s.io/v1", "kind": "Event",
		"metadata":            map[string]any{"name": "web-1.scheduled"},
		"eventTime":           "2026-01-02T03:04:05.000006Z",
		"reportingController": "default-scheduler", "reportingInstance": "default-scheduler-host",
		"action": "Binding", "reason": "Scheduled", "type": "Normal",
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": "web-1"},
		"note":      "Successfully assigned default/web-1 to node-0",
	})
	got := c.must(200, "GET", core+"/web-1.scheduled", nil)
	if got["message"] != "Successfully assigned default/web-1 to node-0" || got["reportingComponent"] != "default-scheduler" ||
		got["apiVersion"] != "v1" || got["involvedObject"].(map[string]any)["name"] != "web-1" || rv(got) != rv(created) {
		t.Errorf("the core view of an events.k8s.io event: %v", got)
	}
	if ev := w.next(5 * time.Second); ev.Type != "ADDED" || ev.Object["note"] == nil || ev.Object["apiVersion"] != "events.k8s.io/v1" {
		t.Errorf("watch event %+v", ev)
	}

	// A core event, with the legacy counters, is seen through events.k8s.io.
	c.must(201, "POST", core, map[string]any{
		"metadata":       map[string]any{"name": "web-1.pulled"},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": "web-1"},
		"reason":         "Pulled", "message": "pulled", "type": "Normal", "count": 3,
		"source":         map[string]any{"component": "kubelet", "host": "node-0"},
		"firstTimestamp": "2026-01-02T03:04:05Z", "lastTimestamp": "2026-01-02T03:05:05Z",
	})
	pulled := c.must(200, "GET", v1+"/web-1.pulled", nil)
	if pulled["note"] != "pulled" || pulled["deprecatedCount"] != float64(3) ||
		pulled["deprecatedSource"].(map[string]any)["host"] != "node-0" || pulled["deprecatedLastTimestamp"] != "2026-01-02T03:05:05Z" {
		t.Errorf("the events.k8s.io view of a core event: %v", pulled)
	}
	if ev := w.next(5 * time.Second); ev.Type != "ADDED" || name(ev.Object) != "web-1.pulled" {
		t.Errorf("watch event %+v", ev)
	}

	list := c.must(200, "GET", v1+"?fieldSelector=reportingController=default-scheduler", nil)
	if items := list["items"].([]any); len(items) != 1 || name(items[0].(map[string]any)) != "web-1.scheduled" {
		t.Errorf("selected by reportingController: %v", items)
	}
	if r := c.do("GET", v1+"?fieldSelector=involvedObject.name=web-1", nil, ""); r.Code != 400 {
		t.Errorf("a core field name on events.k8s.io: %d %s", r.Code, r.Body)
	}

	// events.k8s.io's stricter create validation, on the core fields.
	r := c.do("POST", v1, map[string]any{
		"metadata": map[string]any{"name": "bad"}, "reason": "R", "type": "Odd",
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": "web-1"},
	}, "")
	if r.Code != 422 {
		t.Fatalf("invalid events.k8s.io event: %d %s", r.Code, r.Body)
	}
	for _, f := range []string{`"field":"eventTime"`, `"field":"type"`} {
		if !strings.Contains(string(r.Body), f) {
			t.Errorf("no cause %s in %s", f, r.Body)
		}
	}
	c.must(404, "GET", v1+"/bad", nil)

	c.must(200, "DELETE", v1+"/web-1.pulled", nil)
	c.must(404, "GET", core+"/web-1.pulled", nil)
}

// TestScaleOfStatefulSetsAndReplicationControllers: the scale subresource
// of the workload kinds kube gives one, as kubectl scale and the HPA use it.
func TestScaleOfStatefulSetsAndReplicationControllers(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	template := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "db"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}
	c.must(201, "POST", "/apis/apps/v1/namespaces/default/statefulsets", map[string]any{
		"metadata": map[string]any{"name": "db"},
		"spec": map[string]any{"replicas": 2, "serviceName": "db", "template": template,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "db"}}},
	})
	c.must(201, "POST", "/api/v1/namespaces/default/replicationcontrollers", map[string]any{
		"metadata": map[string]any{"name": "rc"},
		"spec":     map[string]any{"replicas": 1, "selector": map[string]any{"app": "db"}, "template": template},
	})
	for _, path := range []string{"/apis/apps/v1/namespaces/default/statefulsets/db", "/api/v1/namespaces/default/replicationcontrollers/rc"} {
		sc := c.must(200, "GET", path+"/scale", nil)
		if sc["kind"] != "Scale" || sc["status"].(map[string]any)["selector"] != "app=db" {
			t.Errorf("%s/scale: %v", path, sc)
		}
		c.must(200, "PATCH", path+"/scale", map[string]any{"spec": map[string]any{"replicas": 5}}, "application/merge-patch+json")
		if got := c.must(200, "GET", path, nil)["spec"].(map[string]any)["replicas"]; got != float64(5) {
			t.Errorf("%s: replicas %v after scaling to 5", path, got)
		}
	}
}
