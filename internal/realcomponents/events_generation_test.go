package realcomponents

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestEventGenerationAsKube: an Event's metadata.generation is what
// kube-apiserver keeps through create, patch and update (kube's event
// strategy manages none); the conformance spec "Events should manage the
// lifecycle of an event" compares an updated Event with what it sent.
func TestEventGenerationAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const path = "/api/v1/namespaces/default/events"
	var got [2][]any
	for i, e := range both.each() {
		c := e.must(t, http.StatusCreated, "POST", path, `{"metadata":{"name":"ev"},"involvedObject":{"namespace":"default"},"reason":"Test","message":"created","type":"Normal"}`)
		p := e.must(t, http.StatusOK, "PATCH", path+"/ev", `{"message":"patched"}`)
		cur := e.must(t, http.StatusOK, "GET", path+"/ev", "")
		cur["series"] = map[string]any{"count": 100, "lastObservedTime": "2017-09-19T13:49:16.000000Z"}
		delete(cur["metadata"].(map[string]any), "resourceVersion")
		body, _ := json.Marshal(cur)
		u := e.must(t, http.StatusOK, "PUT", path+"/ev", string(body))
		for _, o := range []map[string]any{c, p, u} {
			got[i] = append(got[i], o["metadata"].(map[string]any)["generation"])
		}
	}
	if len(got[0]) != len(got[1]) || got[0][0] != got[1][0] || got[0][1] != got[1][1] || got[0][2] != got[1][2] {
		t.Errorf("generation after create, patch, update:\nkube-apiserver: %v\nminik8s:        %v", got[0], got[1])
	}
}
