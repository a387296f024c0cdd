package root_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/internal/crdtest"
)

// crontabCRD is the CronTab of the Kubernetes documentation's custom
// resource task, in the "all" category.
const crontabCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.GROUP
spec:
  group: GROUP
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer}
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
`

const crontab = `apiVersion: GROUP/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
`

// widgetCRD has printer columns and the status and scale subresources.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color, description: the color}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status', priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`

const widgets = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {app: w}}
spec: {replicas: 2, color: blue}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w2, labels: {app: w}}
spec: {replicas: 1, color: red}
`

// TestIntegrationCustomResourcesAsKubectl drives every verb that takes a
// TYPE or reads manifests with custom resources through kubectl-lite (in
// namespace "lite") and the real kubectl (in "real"), and compares stdout,
// stderr and exit codes.
func TestIntegrationCustomResourcesAsKubectl(t *testing.T) {
	c := startCluster(t)
	oracle.Path(t, "kubectl")
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crdtest.Create(t, c.client, strings.ReplaceAll(crontabCRD, "GROUP", "stable.example.com"), widgetCRD)
	crontabFile := write("crontab.yaml", strings.ReplaceAll(crontab, "GROUP", "stable.example.com"))
	widgetsFile := write("widgets.yaml", widgets)
	unknownFile := write("unknown.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n---\napiVersion: v1\nkind: Frobnicator\nmetadata: {name: x}\n")
	// A CRD and an object of it in one file, per CLI (a group of its own,
	// the CRD being cluster-scoped).
	for _, ns := range []string{"lite", "real"} {
		group := ns + ".example.com"
		write("mixed-"+ns+".yaml", strings.ReplaceAll(crontabCRD, "GROUP", group)+"---\n"+strings.ReplaceAll(crontab, "GROUP", group))
		c.mustRun("", "create", "namespace", ns)
	}
	editor := write("editor.sh", "#!/bin/sh\nsed -i 's/color: blue/color: green/' \"$1\"\n")
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	readyWidget := func(ns string) {
		body := `{"status":{"replicas":2,"selector":"app=w","conditions":[{"type":"Ready","status":"True"}]}}`
		if _, err := c.client.Do(ctx, client.Request{Method: "PATCH", Path: "/apis/example.com/v1/namespaces/" + ns + "/widgets/w1/status",
			Body: []byte(body), ContentType: "application/merge-patch+json"}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		args  []string
		env   []string
		setup func(ns string)
	}{
		{args: []string{"apply", "-f", crontabFile}},
		{args: []string{"apply", "-f", crontabFile}},
		{args: []string{"get", "crontabs"}},
		{args: []string{"get", "ct"}},
		{args: []string{"get", "crontab.stable.example.com", "my-new-cron-object", "-o", "yaml"}},
		{args: []string{"get", "ct/my-new-cron-object", "-o", "json"}},
		{args: []string{"get", "CronTab", "-o", "name"}},
		{args: []string{"get", "ct", "-o", "wide"}},
		{args: []string{"get", "ct", "-o", "custom-columns=NAME:.metadata.name,SPEC:.spec.cronSpec"}},
		{args: []string{"get", "ct", "my-new-cron-object", "-o", "jsonpath={.spec.image}"}},
		{args: []string{"get", "-f", crontabFile}},
		{args: []string{"__complete", "get", "ct", ""}},
		{args: []string{"__complete", "describe", "crontabs.stable.example.com/my"}},
		{args: []string{"create", "-f", widgetsFile}},
		{args: []string{"create", "-f", widgetsFile}},
		{args: []string{"apply", "--server-side", "-f", widgetsFile}},
		{args: []string{"get", "widgets"}, setup: readyWidget},
		{args: []string{"get", "wd", "-o", "wide"}},
		{args: []string{"get", "widgets", "-l", "app=w", "--show-labels"}},
		{args: []string{"get", "all"}},
		{args: []string{"get", "ct,widgets"}},
		{args: []string{"describe", "ct", "my-new-cron-object"}},
		{args: []string{"describe", "widgets"}},
		{args: []string{"label", "ct", "my-new-cron-object", "tier=batch"}},
		{args: []string{"annotate", "widget/w2", "note=hi"}},
		{args: []string{"patch", "ct", "my-new-cron-object", "--type=merge", "-p", `{"spec":{"replicas":3}}`}},
		{args: []string{"patch", "ct", "my-new-cron-object", "--type=json", "-p", `[{"op":"replace","path":"/spec/image","value":"other"}]`}},
		{args: []string{"patch", "ct", "my-new-cron-object", "-p", `{"spec":{"replicas":4}}`}},
		{args: []string{"scale", "widgets", "w1", "--replicas=3"}},
		{args: []string{"scale", "ct", "my-new-cron-object", "--replicas=3"}},
		{args: []string{"wait", "--for=condition=Ready", "widget/w1", "--timeout=5s"}},
		{args: []string{"edit", "widget", "w1"}, env: []string{"KUBE_EDITOR=" + editor}},
		{args: []string{"get", "widget", "w1", "-o", "jsonpath={.spec}"}},
		{args: []string{"replace", "-f", crontabFile}},
		{args: []string{"delete", "widgets", "-l", "app=w"}},
		{args: []string{"delete", "crontab", "my-new-cron-object"}},
		{args: []string{"delete", "-f", crontabFile}},
		{args: []string{"get", "foos"}},
		{args: []string{"get", "foos.example.com", "x"}},
		{args: []string{"delete", "crontabs.other.com", "x"}},
		{args: []string{"apply", "-f", filepath.Join(dir, "mixed-NS.yaml")}},
		{args: []string{"apply", "-f", filepath.Join(dir, "mixed-NS.yaml")}},
		{args: []string{"apply", "-f", unknownFile}},
		{args: []string{"delete", "-f", unknownFile}},
		{args: []string{"create", "-f", unknownFile}},
	}
	for _, st := range steps {
		t.Run(strings.Join(st.args, " "), func(t *testing.T) {
			with := func(ns string) []string {
				var out []string
				for _, a := range st.args {
					out = append(out, strings.ReplaceAll(a, "NS", ns))
				}
				return append([]string{"-n", ns}, out...)
			}
			if st.setup != nil {
				st.setup("lite")
				st.setup("real")
			}
			out, errOut, code := bothRun(t, c, binary, st.env, with("lite")...)
			kOut, kErrOut, kCode := bothRun(t, c, oracle.Path(t, "kubectl"), st.env, with("real")...)
			if crNorm(out, "lite") != crNorm(kOut, "real") || crNorm(errOut, "lite") != crNorm(kErrOut, "real") || code != kCode {
				t.Errorf("kubectl-lite: exit %d\n%s%s\nkubectl: exit %d\n%s%s", code, out, errOut, kCode, kOut, kErrOut)
			}
		})
	}
	// api-resources lists the custom resources as kubectl does.
	out, errOut, code := bothRun(t, c, binary, nil, "api-resources", "--api-group=example.com")
	kOut, kErrOut, kCode := bothRun(t, c, oracle.Path(t, "kubectl"), nil, "api-resources", "--api-group=example.com")
	if out != kOut || errOut != kErrOut || code != kCode {
		t.Errorf("api-resources: kubectl-lite: exit %d\n%s%s\nkubectl: exit %d\n%s%s", code, out, errOut, kCode, kOut, kErrOut)
	}
}

// bothRun runs one CLI binary (kubectl-lite or the real kubectl) with
// extra environment; kubectl takes the completion command first, its
// flags after.
func bothRun(t *testing.T, c *cluster, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	full := append([]string{"--kubeconfig", c.kubeconfig}, args...)
	if i := slices.Index(args, "__complete"); i >= 0 {
		full = append([]string{"__complete", "--kubeconfig", c.kubeconfig}, slices.Delete(slices.Clone(args), i, i+1)...)
	}
	return c.runCLI(t, bin, "", env, full...)
}

// serverSetValues are the values the server sets differently for each
// object (in YAML, JSON or a last-applied annotation), masked when two
// CLIs' outputs are compared.
var serverSetValues = regexp.MustCompile(`("?(uid|creationTimestamp|resourceVersion|time)"?: )"?[^",\n]+"?`)

var (
	crDescribe = regexp.MustCompile(`((Resource Version|UID|Creation Timestamp):\s+)\S+`)
	crAge      = regexp.MustCompile(`\b[0-9]+(s|m[0-9]*s?)\b`)
)

// crNorm makes one CLI's output comparable with the other's: the tool and
// namespace names, server-set values and ages. kubectl-lite's user agent
// (the field manager of requests without one, scale's) is its own.
func crNorm(s, ns string) string {
	s = strings.ReplaceAll(s, "minik8s-kubectl-lite", "kubectl")
	s = strings.ReplaceAll(s, "kubectl-lite", "kubectl")
	s = strings.ReplaceAll(s, ns+".example.com", "NS.example.com")
	s = strings.ReplaceAll(s, "mixed-"+ns+".yaml", "mixed-NS.yaml")
	s = strings.ReplaceAll(s, `"`+ns+`"`, `"NS"`)
	s = strings.ReplaceAll(s, `\"`+ns+`\"`, `\"NS\"`)
	s = strings.ReplaceAll(s, " "+ns+"\n", " NS\n")
	s = strings.ReplaceAll(s, " "+ns+" ", " NS ")
	s = strings.ReplaceAll(s, "namespace: "+ns, "namespace: NS")
	s = strings.ReplaceAll(s, "/namespaces/"+ns+"/", "/namespaces/NS/")
	s = serverSetValues.ReplaceAllString(s, "$1X")
	s = crDescribe.ReplaceAllString(s, "${1}X")
	return crAge.ReplaceAllString(s, "AGE")
}
