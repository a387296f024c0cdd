package realcomponents

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestReviewAcceptAsKube: the review kinds answer the Accept headers
// kube-apiserver answers: a SelfSubjectAccessReview asked for as a Table
// is 406 (kube's review endpoints have no table form; the conformance spec
// "Servers with support for Table transformation should return a 406 for a
// backend which does not implement metadata" posts exactly this), as JSON
// or YAML it is 201.
func TestReviewAcceptAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const ssar = `{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`
	for _, accept := range []string{
		"application/json;as=Table;v=v1;g=meta.k8s.io",
		"application/json;as=Table;v=v1beta1;g=meta.k8s.io",
		"application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
		"application/json", "application/yaml",
	} {
		var got [2]string
		for i, e := range both.each() {
			req, err := http.NewRequest("POST", e.base+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", strings.NewReader(ssar))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			resp, err := e.hc.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got[i] = resp.Status + " " + resp.Header.Get("Content-Type")
			if resp.StatusCode >= 400 {
				// kube-apiserver indents this one (its fallback writer
				// after the review was made); the fields are what count.
				var c bytes.Buffer
				if err := json.Compact(&c, body); err != nil {
					c.Write(body)
				}
				got[i] += " " + c.String()
			}
		}
		if got[0] != got[1] {
			t.Errorf("POST selfsubjectaccessreviews, Accept %q:\nkube-apiserver: %s\nminik8s:        %s", accept, got[0], got[1])
		}
	}
}
