package realcomponents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// indexedJob is a Job manifest named name with a hand-written selector
// (so that both servers store the same spec), completions 5 in mode, and
// spec merged in (a JSON object's members, without braces).
func indexedJob(name, mode, spec string) string {
	if spec != "" {
		spec = "," + spec
	}
	return fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":%q},
"spec":{"completions":5,"parallelism":2,"completionMode":%q,"manualSelector":true,"selector":{"matchLabels":{"job":%q}},
"template":{"metadata":{"labels":{"job":%q}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}%s}}`,
		name, mode, name, name, spec)
}

// TestJobSuccessPolicyAsKube sends the same Jobs to the real
// kube-apiserver v1.37 and to minik8s' apiserver: each malformed
// spec.successPolicy (on a NonIndexed job, no rules, more than 20, a rule
// with neither field, succeededIndexes out of range, decreasing or not
// numbers, succeededCount above completions or the indexes named) and the
// Indexed-job limits beside it are refused with identical answers (422,
// message, causes in kube's order); a valid policy is stored and read
// back alike by both, and changing it is refused alike (immutable), as
// are backoffLimitPerIndex, managedBy and completionMode; an Indexed job
// whose last pod's hostname would not be a DNS label is refused alike.
func TestJobSuccessPolicyAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const jobs = "/apis/batch/v1/namespaces/default/jobs"

	rules := func(n int) string {
		r := make([]string, n)
		for i := range r {
			r[i] = `{"succeededCount":1}`
		}
		return `"successPolicy":{"rules":[` + strings.Join(r, ",") + `]}`
	}
	for _, tc := range []struct{ name, mode, spec string }{
		{"not indexed", "NonIndexed", `"successPolicy":{"rules":[{"succeededIndexes":"0-2","succeededCount":1}]}`},
		{"no rules", "Indexed", `"successPolicy":{"rules":[]}`},
		{"too many rules", "Indexed", rules(21)},
		{"empty rule", "Indexed", `"successPolicy":{"rules":[{"succeededCount":1},{}]}`},
		{"index too large", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"1,5"}]}`},
		{"interval end too large", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"2-7"}]}`},
		{"three parts", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"0-1-2"}]}`},
		{"not a number", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"0,x"}]}`},
		{"decreasing", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"3,1"}]}`},
		{"overlapping", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"0-2,2-3"}]}`},
		{"reversed interval", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"3-1"}]}`},
		{"count above completions", "Indexed", `"successPolicy":{"rules":[{"succeededCount":6}]}`},
		{"negative count", "Indexed", `"successPolicy":{"rules":[{"succeededCount":-1}]}`},
		{"count above indexes named", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"0,2-3","succeededCount":4}]}`},
		{"second rule bad", "Indexed", `"successPolicy":{"rules":[{"succeededIndexes":"0"},{"succeededIndexes":"0-9","succeededCount":9}]}`},
		{"per-index limit not indexed", "NonIndexed", `"backoffLimitPerIndex":1,"maxFailedIndexes":1`},
		{"max failed indexes above completions", "Indexed", `"backoffLimitPerIndex":1,"maxFailedIndexes":6`},
		{"parallelism of an indexed job", "Indexed", `"parallelism":100001`},
		{"managedBy", "Indexed", `"managedBy":"no-domain"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both.sameRefusal(t, "POST", jobs, indexedJob("bad", tc.mode, tc.spec))
		})
	}
	// An Indexed job's last pod would be named NAME-4: too long a label.
	t.Run("name too long for its indexes", func(t *testing.T) {
		both.sameRefusal(t, "POST", jobs, indexedJob(strings.Repeat("n", 62), "Indexed", ""))
	})

	t.Run("valid policy stored and immutable", func(t *testing.T) {
		const policy = `{"rules":[{"succeededCount":2,"succeededIndexes":"0,2-4"},{"succeededCount":3}]}` // keys sorted, as json.Marshal writes a map
		var stored []string
		for _, e := range both.each() {
			e.must(t, http.StatusCreated, "POST", jobs, indexedJob("good", "Indexed", `"successPolicy":`+policy))
			out := e.must(t, http.StatusOK, "GET", jobs+"/good", "")
			b, err := json.Marshal(out["spec"].(map[string]any)["successPolicy"])
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, string(b))
		}
		if stored[0] != policy || stored[1] != policy {
			t.Errorf("successPolicy read back:\nkube-apiserver: %s\nminik8s:        %s\nsent:           %s", stored[0], stored[1], policy)
		}
		both.sameRefusal(t, "PATCH", jobs+"/good", `{"spec":{"successPolicy":{"rules":[{"succeededCount":1}]}}}`)
		both.sameRefusal(t, "PATCH", jobs+"/good", `{"spec":{"successPolicy":null}}`)
		both.sameRefusal(t, "PATCH", jobs+"/good", `{"spec":{"backoffLimitPerIndex":1,"managedBy":"example.com/other"}}`)
		both.sameRefusal(t, "PATCH", jobs+"/good", `{"spec":{"completionMode":"NonIndexed"}}`)
	})
}
