package realcomponents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/oracle"
)

// aggregatedAccept asks for the aggregated discovery document, as the
// conformance specs and kubectl do.
const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// TestAggregatedDiscoveryAsKube: /api and /apis answer the same
// apidiscovery.k8s.io/v2 documents as kube-apiserver v1.37 (groups and
// versions in priority order, resources, verbs, short names, categories,
// subresources, scope, responseKind, freshness) with its ETag, Vary and
// 304 on If-None-Match; every Accept header, malformed ones included, is
// negotiated to the same document or the same refusal on /api, /apis and
// the legacy documents; a CRD's group joins the document as kube's does
// and gets its APIService (crd-autoregister), gone with the CRD; an
// APIService whose backend is missing is listed Stale, and the real
// kubectl's api-resources then exits 0 and prints the same on both.
func TestAggregatedDiscoveryAsKube(t *testing.T) {
	t.Parallel()
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}}
	kubeconfigs := map[string]string{"kube-apiserver": k.kubeconfig(t, "kubernetes-admin", "system:masters"), "minik8s": s.Options.WriteKubeconfig}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("documents", func(t *testing.T) {
		// kube registers its APIServices over its first seconds; the
		// order of groups follows them.
		waitFor(ctx, t, "the same group order in /apis", func() (bool, string) {
			kg, og := groupNames(t, both.kube), groupNames(t, both.ours)
			return slices.Equal(kg, og), fmt.Sprintf("kube %v, minik8s %v", kg, og)
		})
		for _, path := range []string{"/apis", "/api"} {
			kh, kdoc := getDoc(t, both.kube, path, aggregatedAccept, "")
			oh, odoc := getDoc(t, both.ours, path, aggregatedAccept, "")
			normalised := dropNotYetServed(kdoc, odoc)
			if d := lineDiff(indent(kdoc), indent(odoc)); d != "" {
				t.Errorf("aggregated discovery of %s differs:\n%s", path, d)
				continue
			}
			if !normalised && kh.Get("ETag") != oh.Get("ETag") {
				t.Errorf("%s: the same document has ETag %s on kube-apiserver, %s on minik8s", path, kh.Get("ETag"), oh.Get("ETag"))
			}
			t.Logf("%s: the same %d groups (subresources not served yet dropped from kube's: %v), ETags equal: %v",
				path, len(asList(odoc["items"])), normalised, kh.Get("ETag") == oh.Get("ETag"))
		}
		// The legacy /apis lists the groups in the same order, the
		// preferred version first.
		both.sameAnswer(t, http.StatusOK, "GET", "/apis", "")
	})

	t.Run("negotiation", func(t *testing.T) {
		accepts := []string{"-", "", aggregatedAccept,
			"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
			"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json;q=0.9",
			"application/json, " + aggregatedAccept,
			"application/json;q=0.5, " + aggregatedAccept + ";q=0.9",
			"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
			"application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
			"*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
			"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscovery",
			"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
			"application/json;as=Table;v=v1;g=meta.k8s.io",
			"application/yaml", "application/vnd.kubernetes.protobuf",
			"foo", "text/plain", ",,,", "application/json;;;", "application/",
			aggregatedAccept + ";stream=watch", aggregatedAccept + ";sv=v1", aggregatedAccept + ";profile=nopeer", aggregatedAccept + ";q=abc",
		}
		for _, path := range []string{"/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1", "/api/", "/apis/", "/apis/apps/", "/api/v1/"} {
			for _, accept := range accepts {
				kc, kh, kb := getWith(t, both.kube, path, accept, "")
				oc, oh, ob := getWith(t, both.ours, path, accept, "")
				want := answerShape(kc, kh, kb)
				if got := answerShape(oc, oh, ob); got != want {
					t.Errorf("GET %s Accept %q:\nkube-apiserver: %s\nminik8s:        %s", path, accept, want, got)
				}
			}
		}
	})

	t.Run("etag", func(t *testing.T) {
		for _, e := range both.each() {
			_, h, _ := getWith(t, e, "/apis", aggregatedAccept, "")
			etag := h.Get("ETag")
			if !strings.HasPrefix(etag, `"`) {
				t.Errorf("%s: ETag %q is not quoted", e.name, etag)
			}
			if code, _, body := getWith(t, e, "/apis", aggregatedAccept, etag); code != http.StatusNotModified || len(body) != 0 {
				t.Errorf("%s: If-None-Match %s: %d %q, want 304 and no body", e.name, etag, code, body)
			}
			for _, other := range []string{strings.Trim(etag, `"`), `W/` + etag, `"0"`} {
				if code, _, _ := getWith(t, e, "/apis", aggregatedAccept, other); code != http.StatusOK {
					t.Errorf("%s: If-None-Match %s: %d, want 200", e.name, other, code)
				}
			}
			// The legacy document has no ETag.
			if code, h, _ := getWith(t, e, "/apis", "application/json", etag); code != http.StatusOK || h.Get("ETag") != "" {
				t.Errorf("%s: legacy /apis with If-None-Match: %d, ETag %q", e.name, code, h.Get("ETag"))
			}
		}
	})

	t.Run("crd", func(t *testing.T) {
		const group = "discovery.example.com"
		crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.` + group + `"},
"spec":{"group":"` + group + `","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList","shortNames":["wd"],"categories":["all","gadgets"]},
"versions":[
 {"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
 {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
  "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}}},
 {"name":"v2alpha1","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
		both.must(t, http.StatusCreated, "POST", crdsPath, crd)
		var entries [2]string
		for i, e := range both.each() {
			waitFor(ctx, t, e.name+" to list "+group+" in aggregated discovery", func() (bool, string) {
				_, doc := getDoc(t, e, "/apis", aggregatedAccept, "")
				g := findGroup(doc, group)
				entries[i] = indent(g)
				return g != nil && len(asList(g["versions"])) == 2, entries[i]
			})
		}
		if d := lineDiff(entries[0], entries[1]); d != "" {
			t.Errorf("the CRD's group differs:\n%s", d)
		}
		waitFor(ctx, t, "the same APIServices", func() (bool, string) {
			d := lineDiff(apiServiceLines(t, both.kube), apiServiceLines(t, both.ours))
			return d == "", d
		})
		// The real kubectl lists the same APIServices (AGE aside).
		var tables [2]string
		for i, e := range both.each() {
			var rows []string
			for _, l := range strings.Split(strings.TrimSpace(kubectlQuiet(ctx, t, kubeconfigs[e.name], "get", "apiservices")), "\n") {
				f := strings.Fields(l)
				rows = append(rows, strings.Join(f[:len(f)-1], " "))
			}
			tables[i] = strings.Join(rows, "\n")
		}
		if d := lineDiff(tables[0], tables[1]); d != "" {
			t.Errorf("kubectl get apiservices differs:\n%s", d)
		}
		both.must(t, http.StatusOK, "DELETE", crdsPath+"/widgets."+group, "")
		for _, e := range both.each() {
			waitFor(ctx, t, e.name+" to drop the CRD's APIServices and group", func() (bool, string) {
				lines := apiServiceLines(t, e)
				_, doc := getDoc(t, e, "/apis", aggregatedAccept, "")
				if !strings.Contains(lines, group) && findGroup(doc, group) == nil {
					return true, ""
				}
				// What keeps them: the CRD as the server has it (404 once
				// gone; else its finalizers and conditions).
				code, crd := e.do(t, "GET", crdsPath+"/widgets."+group, "")
				md, _ := crd["metadata"].(map[string]any)
				return false, fmt.Sprintf("GET the CRD: %d finalizers=%v deletionTimestamp=%v conditions=%v\nAPIServices:\n%s",
					code, md["finalizers"], md["deletionTimestamp"], crd["status"], lines)
			})
		}
	})

	t.Run("unavailable APIService", func(t *testing.T) {
		const apiservice = `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io"},
"spec":{"group":"metrics.k8s.io","version":"v1beta1","service":{"namespace":"kube-system","name":"metrics-server"},"insecureSkipTLSVerify":true,"groupPriorityMinimum":100,"versionPriority":100}}`
		both.must(t, http.StatusCreated, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", apiservice)
		var entries [2]string
		for i, e := range both.each() {
			waitFor(ctx, t, e.name+" to list metrics.k8s.io as Stale", func() (bool, string) {
				_, doc := getDoc(t, e, "/apis", aggregatedAccept, "")
				g := findGroup(doc, "metrics.k8s.io")
				entries[i] = indent(g)
				return strings.Contains(entries[i], `"freshness": "Stale"`), entries[i]
			})
		}
		if d := lineDiff(entries[0], entries[1]); d != "" {
			t.Errorf("the unavailable APIService's group differs:\n%s", d)
		}
		waitFor(ctx, t, "the same APIService conditions", func() (bool, string) {
			d := lineDiff(apiServiceLines(t, both.kube), apiServiceLines(t, both.ours))
			return d == "", d
		})
		var outs [2]string
		for i, e := range both.each() {
			outs[i] = kubectlQuiet(ctx, t, kubeconfigs[e.name], "api-resources", "--sort-by=name")
			if strings.Contains(outs[i], "metrics.k8s.io") || strings.Contains(outs[i], "couldn't get resource list") {
				t.Errorf("%s: kubectl api-resources says:\n%s", e.name, outs[i])
			}
		}
		if d := lineDiff(outs[0], outs[1]); d != "" {
			t.Errorf("kubectl api-resources differs with an unavailable APIService:\n%s", d)
		}
	})
}

// getWith sends GET path with Accept (none when "-") and If-None-Match
// (none when empty) and returns the answer.
func getWith(t *testing.T, e *endpoint, path, accept, ifNoneMatch string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", e.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "-" {
		req.Header.Set("Accept", accept)
	}
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("%s: GET %s: %v", e.name, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: GET %s: %v", e.name, path, err)
	}
	return resp.StatusCode, resp.Header, body
}

// getDoc reads a JSON document, failing the test unless it is 200.
func getDoc(t *testing.T, e *endpoint, path, accept, ifNoneMatch string) (http.Header, map[string]any) {
	t.Helper()
	code, h, body := getWith(t, e, path, accept, ifNoneMatch)
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); code != http.StatusOK || err != nil {
		t.Fatalf("%s: GET %s (Accept %s): %d %s", e.name, path, accept, code, body)
	}
	return h, doc
}

// answerShape sums up an answer for comparison: the code, the
// Content-Type, the aggregated document's headers, the kind, and the whole
// body of a refusal.
func answerShape(code int, h http.Header, body []byte) string {
	shape := fmt.Sprintf("%d %q", code, h.Get("Content-Type"))
	if h.Get("ETag") != "" {
		shape += fmt.Sprintf(" ETag Vary=%q Cache-Control=%q", h.Get("Vary"), h.Get("Cache-Control"))
	}
	var doc map[string]any
	switch {
	case json.Unmarshal(body, &doc) != nil:
		if strings.Contains(h.Get("Content-Type"), "protobuf") {
			shape += " protobuf"
		}
	case code >= 300:
		compact, _ := json.Marshal(doc)
		shape += " " + string(compact)
	default:
		shape += fmt.Sprintf(" kind=%v", doc["kind"])
	}
	return shape
}

// groupNames lists /apis's groups in order.
func groupNames(t *testing.T, e *endpoint) []string {
	t.Helper()
	_, doc := getDoc(t, e, "/apis", aggregatedAccept, "")
	var names []string
	for _, g := range asList(doc["items"]) {
		names = append(names, fmt.Sprint(g.(map[string]any)["metadata"].(map[string]any)["name"]))
	}
	return names
}

// findGroup returns a group's entry in an aggregated document, or nil.
func findGroup(doc map[string]any, name string) map[string]any {
	for _, g := range asList(doc["items"]) {
		g := g.(map[string]any)
		if g["metadata"].(map[string]any)["name"] == name {
			return g
		}
	}
	return nil
}

// dropNotYetServed removes from kube's document the core subresources
// minik8s does not serve yet (notYetServed) when minik8s's lacks them, and
// reports whether it removed any.
func dropNotYetServed(kube, ours map[string]any) bool {
	has := func(doc map[string]any, resource, sub string) bool {
		for _, g := range asList(doc["items"]) {
			for _, v := range asList(g.(map[string]any)["versions"]) {
				for _, r := range asList(v.(map[string]any)["resources"]) {
					r := r.(map[string]any)
					if r["resource"] != resource {
						continue
					}
					for _, s := range asList(r["subresources"]) {
						if s.(map[string]any)["subresource"] == sub {
							return true
						}
					}
				}
			}
		}
		return false
	}
	dropped := false
	for _, g := range asList(kube["items"]) {
		for _, v := range asList(g.(map[string]any)["versions"]) {
			for _, r := range asList(v.(map[string]any)["resources"]) {
				r := r.(map[string]any)
				var kept []any
				for _, s := range asList(r["subresources"]) {
					sub := s.(map[string]any)["subresource"].(string)
					name := fmt.Sprint(r["resource"], "/", sub)
					if slices.Contains(notYetServed, name) && !has(ours, r["resource"].(string), sub) {
						dropped = true
						continue
					}
					kept = append(kept, s)
				}
				if _, ok := r["subresources"]; ok {
					r["subresources"] = kept
				}
			}
		}
	}
	return dropped
}

// apiServiceLines sums up every APIService: name, automanaged label,
// spec, and its Available condition.
func apiServiceLines(t *testing.T, e *endpoint) string {
	t.Helper()
	var lines []string
	for _, it := range asList(e.must(t, http.StatusOK, "GET", "/apis/apiregistration.k8s.io/v1/apiservices", "")["items"]) {
		m := it.(map[string]any)
		md := m["metadata"].(map[string]any)
		labels, _ := json.Marshal(md["labels"])
		spec, _ := json.Marshal(m["spec"])
		var cond string
		status, _ := m["status"].(map[string]any)
		for _, c := range asList(status["conditions"]) {
			c := c.(map[string]any)
			if c["type"] == "Available" {
				cond = fmt.Sprint(c["status"], " ", c["reason"], " ", c["message"])
			}
		}
		lines = append(lines, fmt.Sprintf("%v labels=%s spec=%s available=%s", md["name"], labels, spec, cond))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func indent(v any) string {
	if m, ok := v.(map[string]any); ok && m == nil {
		return "<none>"
	}
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
}

// kubectlQuiet runs the real kubectl with its own discovery cache and
// returns what it printed on stdout and stderr together; it fails the
// test when kubectl fails.
func kubectlQuiet(ctx context.Context, t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "cache")
	cmd := exec.CommandContext(ctx, oracle.Path(t, "kubectl"), append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cache}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
