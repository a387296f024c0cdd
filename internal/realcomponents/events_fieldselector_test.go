package realcomponents

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// TestEventFieldSelectorsAsKube lists Events by field on kube-apiserver
// v1.37 and on minik8s, as the conformance spec 'Events API should ensure
// that an event can be fetched, patched, deleted, and listed' does: an
// event written through events.k8s.io/v1 has no source, and core/v1's
// "source" field then is its reportingController, as in kube. Both servers
// list the same events for each selector.
func TestEventFieldSelectorsAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const (
		core   = "/api/v1/namespaces/default/events"
		events = "/apis/events.k8s.io/v1/namespaces/default/events"
	)
	for _, e := range both.each() {
		e.must(t, http.StatusCreated, "POST", events, `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"new-api"},
"regarding":{"namespace":"default"},"eventTime":"2017-09-19T13:49:16.000000Z","note":"This is new-api","action":"Do","reason":"Test","type":"Normal",
"reportingController":"test-controller","reportingInstance":"test-node"}`)
		e.must(t, http.StatusCreated, "POST", core, `{"metadata":{"name":"old-api"},"involvedObject":{"namespace":"default"},"reason":"Test",
"message":"This is old-api","type":"Normal","source":{"component":"kubelet"}}`)
	}
	for _, tc := range []struct{ path, selector string }{
		{core, "source=test-controller"},
		{core, "source=kubelet"},
		{core, "reportingComponent=test-controller"},
		{events, "reportingController=test-controller"},
		{"/api/v1/events", "source=test-controller"},
	} {
		var got [2][]string
		for i, e := range both.each() {
			l := e.must(t, http.StatusOK, "GET", tc.path+"?fieldSelector="+url.QueryEscape(tc.selector), "")
			for _, it := range asList(l["items"]) {
				got[i] = append(got[i], it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
			}
			slices.Sort(got[i])
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("GET %s?fieldSelector=%s:\nkube-apiserver: %q\nminik8s:        %q", tc.path, tc.selector, got[0], got[1])
		}
	}
	// The rest of the spec: a series patched in reads back alike.
	both.sameAcceptance(t, http.StatusOK, "PATCH", events+"/new-api",
		`{"series":{"count":2,"lastObservedTime":"2017-09-19T13:49:11.000000Z"}}`, events+"/new-api", core+"/new-api")
}
